// Where the logs go: a file beside the database while a person chats in the terminal (only warnings and worse reach
// the terminal, formatted for people), stderr otherwise; scrubbed of secrets whatever the destination and format.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { loggerFor, logPlan, reachesStderr } from "../src/log.js";

const SECRET = "sk-ant-very-secret-key-1234";

describe("logPlan", () => {
  it("with the terminal chat on a TTY: JSON into DATA_DIR/switchboard.log, warnings and worse on stderr for people", () => {
    expect(logPlan({ ttyChat: true, format: undefined, level: "info", dataDir: "./data" })).toEqual({
      to: "file",
      level: "info",
      file: join("./data", "switchboard.log"),
      format: "json",
      stderr: { level: "warn", format: "pretty", colors: true },
    });
  });

  it("without a TTY (a service, a container): JSON on stderr, as before", () => {
    expect(logPlan({ ttyChat: false, stderrTTY: false, format: undefined, level: "info", dataDir: "/var/lib/sb" })).toEqual({
      to: "stderr",
      level: "info",
      format: "json",
      colors: false,
    });
  });

  it("LOG_FORMAT chooses the format everywhere", () => {
    expect(logPlan({ ttyChat: true, format: "pretty", level: "debug", dataDir: "d" })).toMatchObject({
      to: "file",
      format: "pretty",
      stderr: { format: "pretty" },
    });
    expect(logPlan({ ttyChat: true, format: "json", level: "debug", dataDir: "d" })).toMatchObject({
      to: "file",
      format: "json",
      stderr: { format: "json", colors: false },
    });
    expect(logPlan({ ttyChat: false, stderrTTY: false, format: "pretty", level: "info", dataDir: "d" })).toEqual({
      to: "stderr",
      level: "info",
      format: "pretty",
      colors: false,
    });
    expect(logPlan({ ttyChat: false, stderrTTY: true, format: "json", level: "info", dataDir: "d" })).toMatchObject({ format: "json" });
  });

  it("unset LOG_FORMAT is pretty when stderr is a terminal even without the chat", () => {
    expect(logPlan({ ttyChat: false, stderrTTY: true, format: undefined, level: "info", dataDir: "d" })).toEqual({
      to: "stderr",
      level: "info",
      format: "pretty",
      colors: true,
    });
  });

  it("a stricter LOG_LEVEL than warn also applies to the terminal", () => {
    const plan = logPlan({ ttyChat: true, format: undefined, level: "error", dataDir: "d" });
    expect(plan).toMatchObject({ level: "error", stderr: { level: "error" } });
    expect(reachesStderr(plan, "warn")).toBe(false);
    expect(reachesStderr(plan, "error")).toBe(true);
    const chatty = logPlan({ ttyChat: true, format: undefined, level: "debug", dataDir: "d" });
    expect(reachesStderr(chatty, "info")).toBe(false);
    expect(reachesStderr(chatty, "warn")).toBe(true);
    expect(reachesStderr(logPlan({ ttyChat: false, format: undefined, level: "info", dataDir: "d" }), "info")).toBe(true);
  });
});

describe("loggerFor", () => {
  let dir: string;
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  function terminal() {
    const chunks: string[] = [];
    return { stream: { write: (s: string) => void chunks.push(s) }, text: () => chunks.join("") };
  }

  it("in file mode writes every line to DATA_DIR/switchboard.log and only warnings and worse to stderr", () => {
    dir = mkdtempSync(join(tmpdir(), "switchboard-log-"));
    const plan = logPlan({ ttyChat: true, format: undefined, level: "debug", dataDir: join(dir, "data") });
    const stderr = terminal();
    const log = loggerFor(plan, [SECRET], stderr.stream);
    log.debug("looking closely");
    log.info({ key: SECRET }, "switchboard started");
    log.warn(`the key ${SECRET} is about to expire`);
    log.error({ err: new Error(`refused ${SECRET}`) }, "model call failed");

    const lines = readFileSync(join(dir, "data", "switchboard.log"), "utf8")
      .trim()
      .split("\n");
    const entries = lines.map((l) => JSON.parse(l) as { level: number; msg: string });
    expect(entries.map((e) => e.msg)).toEqual(["looking closely", "switchboard started", "the key [redacted] is about to expire", "model call failed"]);
    const shown = stderr.text();
    expect(shown).not.toContain("looking closely");
    expect(shown).not.toContain("switchboard started");
    expect(shown).toMatch(/WARN.*the key \[redacted\] is about to expire/);
    expect(shown).toMatch(/ERROR.*model call failed/);
    // For people: not JSON; and scrubbed in every destination.
    expect(shown.trimStart().startsWith("{")).toBe(false);
    expect(`${lines.join("\n")}${shown}`).not.toContain(SECRET);
  });

  it("with LOG_FORMAT=pretty writes the file for people too, without colour codes", () => {
    dir = mkdtempSync(join(tmpdir(), "switchboard-log-"));
    const plan = logPlan({ ttyChat: true, format: "pretty", level: "info", dataDir: dir });
    const stderr = terminal();
    loggerFor(plan, [SECRET], stderr.stream).info({ apiKey: SECRET, detail: `x${SECRET}x` }, "store ready");
    const written = readFileSync(join(dir, "switchboard.log"), "utf8");
    expect(written).toMatch(/INFO.*store ready/);
    expect(written).not.toContain("\x1b[");
    expect(written).not.toContain(SECRET);
    expect(stderr.text()).toBe("");
  });

  it("without a TTY writes JSON lines to stderr", () => {
    dir = mkdtempSync(join(tmpdir(), "switchboard-log-"));
    const stderr = terminal();
    const log = loggerFor(logPlan({ ttyChat: false, stderrTTY: false, format: undefined, level: "info", dataDir: dir }), [SECRET], stderr.stream);
    log.info({ token: SECRET }, "switchboard started");
    expect(JSON.parse(stderr.text())).toMatchObject({ msg: "switchboard started", token: "[redacted]" });
  });

  it("falls back to stderr, saying why, when the log file cannot be opened", () => {
    dir = mkdtempSync(join(tmpdir(), "switchboard-log-"));
    // DATA_DIR is a plain file: no log file can be created under it.
    const notADir = join(dir, "data");
    writeFileSync(notADir, "");
    const stderr = terminal();
    const log = loggerFor(logPlan({ ttyChat: true, format: undefined, level: "info", dataDir: notADir }), [], stderr.stream);
    log.warn("still heard");
    expect(stderr.text()).toContain(`cannot write the log file ${join(notADir, "switchboard.log")}`);
    expect(stderr.text()).toMatch(/WARN.*still heard/);
  });
});
