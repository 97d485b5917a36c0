// The settings are documented in one table (docs/admin/configuration.md) and in .env.example, and both agree with
// src/config.ts: every setting is there, nothing else is, and each default is stated as the schema has it.
import Anthropic from "@anthropic-ai/sdk";
import { webApi } from "@slack/bolt";
import { describe, expect, it } from "vitest";
import { loadConfig, SETTINGS } from "../../src/config.js";
import { DEFAULT_MCP_CONFIG } from "../../src/mcp/load.js";
import { docFiles, read } from "./markdown.js";
import { copiedRows, exampleProblems, tableProblems, type Schema } from "./settings.js";

const PAGE = "docs/admin/configuration.md";

/** The defaults that are not the schema's: the libraries' own, or the code's beside the schema. */
const OUTSIDE: Record<string, string> = {
  ANTHROPIC_BASE_URL: new Anthropic({ apiKey: "k", baseURL: null }).baseURL,
  SLACK_API_URL: new webApi.WebClient().slackApiUrl,
  MCP_CONFIG: DEFAULT_MCP_CONFIG,
  // grammY's default API root, and the OpenTelemetry SDK's default protocol (src/telemetry/sdk.ts logs the same).
  TELEGRAM_API_ROOT: "https://api.telegram.org",
  OTEL_EXPORTER_OTLP_PROTOCOL: "http/protobuf",
};

const schema: Schema = { settings: SETTINGS, load: (env) => loadConfig(env), outside: OUTSIDE };

/** `text` with `from` replaced by `to`; `from` must be there, so that an edit never silently does nothing. */
function edit(text: string, ...pairs: Array<[string | RegExp, string]>): string {
  return pairs.reduce((out, [from, to]) => {
    expect(out, String(from)).toMatch(from);
    return out.replace(from, to);
  }, text);
}

describe("the configuration table", () => {
  it("has one row per setting of src/config.ts, each with the schema's default", () => {
    expect(SETTINGS.length).toBeGreaterThan(50);
    expect(tableProblems(read(PAGE), schema)).toEqual([]);
  });

  it("is reported when a setting's row is missing, a default is stated wrong, or a row names no setting", () => {
    const page = read(PAGE);
    const without = edit(page, [/^\| `SESSION_LEASE_MS` \|.*\n/m, ""]);
    expect(tableProblems(without, schema)).toEqual(["SESSION_LEASE_MS is a setting (src/config.ts) but has no row in the table"]);

    const wrong = edit(
      page,
      ["| `MAX_ITERATIONS` | `25` |", "| `MAX_ITERATIONS` | `30` |"],
      ["| `HTTP_STORED_BYTES_PER_USER_MAX` | `200MB` |", "| `HTTP_STORED_BYTES_PER_USER_MAX` | `200MiB` |"],
    );
    expect(tableProblems(wrong, schema)).toEqual([
      "MAX_ITERATIONS: the table's default `30` reads as 30, but the schema's default is 25",
      "HTTP_STORED_BYTES_PER_USER_MAX: the table's default `200MiB` reads as 209715200, but the schema's default is 200000000",
    ]);

    const pair = edit(
      page,
      ["| `10` / `20` |", "| `10` / `25` |"],
      ["| `TELEGRAM_WEBHOOK_URL` | — (long polling) |", "| `TELEGRAM_WEBHOOK_URL` | `https://bot.example/t` |"],
    );
    expect(tableProblems(pair, schema)).toEqual([
      "AGENT_CALL_QUEUE_MAX: the table's default `25` reads as 25, but the schema's default is 20",
      "TELEGRAM_WEBHOOK_URL: the table's default `https://bot.example/t` reads as \"https://bot.example/t\", but the schema's default is undefined",
    ]);

    const extra = edit(page, ["| `DATA_DIR` |", "| `DATA_FOLDER` | `./data` | Nothing reads it. |\n| `DATA_DIR` |"]);
    expect(tableProblems(extra, schema)).toEqual(["DATA_FOLDER is in the table but src/config.ts has no such setting"]);

    const outside = edit(page, ["| `SLACK_API_URL` | `https://slack.com/api/` |", "| `SLACK_API_URL` | `https://slack.com/api` |"]);
    expect(tableProblems(outside, schema)).toEqual(["SLACK_API_URL: the table says the default is `https://slack.com/api`, but it is `https://slack.com/api/`"]);

    const empty = edit(page, ["| `ANTHROPIC_MODEL` | `claude-sonnet-5-5` |", "| `ANTHROPIC_MODEL` | — |"]);
    expect(tableProblems(empty, schema)).toEqual(['ANTHROPIC_MODEL: the table states no default ("—"), but the schema\'s is "claude-sonnet-5-5"']);
  });
});

describe("the settings", () => {
  it("have their rows in the configuration table only: no other page keeps a copy to drift", () => {
    const others = new Map(
      docFiles()
        .filter((path) => path !== PAGE)
        .map((path) => [path, read(path)]),
    );
    expect(copiedRows(others, SETTINGS)).toEqual([]);
    others.set("docs/admin/example.md", "| variable | default |\n|---|---|\n| `MCP_CONFIG` | `./mcp.json` |\n| `mcp__github__*` | a tool |\n");
    expect(copiedRows(others, SETTINGS)).toEqual(["docs/admin/example.md: `MCP_CONFIG`"]);
  });
});

describe(".env.example", () => {
  it("has a line for every setting of src/config.ts, and for nothing else", () => {
    expect(exampleProblems(read(".env.example"), SETTINGS)).toEqual([]);
  });

  it("is reported when a setting's line is missing or names no setting", () => {
    const example = edit(read(".env.example"), [/^MID_TURN=\n/m, ""], [/^DATA_DIR=\n/m, "DATA_DIR=\nDATA_FOLDER=\n"]);
    expect(exampleProblems(example, SETTINGS)).toEqual([
      "MID_TURN is a setting (src/config.ts) but has no MID_TURN= line in .env.example",
      ".env.example has DATA_FOLDER= but src/config.ts has no such setting",
    ]);
  });
});
