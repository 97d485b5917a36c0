// The log's share of the terminal while the terminal chat runs there: one line per warning or error, nothing the
// chat already said about its own conversation, secrets scrubbed; the file keeps every line in full.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { terminalLine, terminalLogger } from "../../../providers/console/terminal-log.js";
import { logPlan } from "../../../src/log.js";

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const record = (fields: Record<string, unknown>) => JSON.stringify({ level: 40, time: 1, app: "switchboard", ...fields });

it("turns a warning or an error into one line, its cause after the message unless the message says it already", () => {
  expect(
    terminalLine(
      record({
        msg: "telegram getUpdates failed",
        provider: "telegram",
        err: { type: "HttpError", message: "Network request for 'getUpdates' failed!\n    at …", stack: "…" },
      }),
    ),
  ).toBe("! telegram getUpdates failed: Network request for 'getUpdates' failed!");
  expect(terminalLine(record({ level: 50, msg: "Slack refused the bot token (invalid_auth): check SLACK_BOT_TOKEN" }))).toBe(
    "! Slack refused the bot token (invalid_auth): check SLACK_BOT_TOKEN",
  );
  expect(terminalLine(record({ msg: "cannot reach the Anthropic API", err: { message: "cannot reach the Anthropic API" } }))).toBe("! cannot reach the Anthropic API");
});

it("leaves out info and debug, and what concerns the terminal chat's own conversation", () => {
  expect(terminalLine(record({ level: 30, msg: "catalog loaded" }))).toBeNull();
  expect(terminalLine(record({ msg: "model call failed", session: "console:local", request: "r1", err: { message: "overloaded" } }))).toBeNull();
  expect(terminalLine(record({ msg: "delivery failed; retrying", session: "telegram:1001" }))).toBe("! delivery failed; retrying");
  expect(terminalLine("cannot write the log file /x/switchboard.log (EACCES); logging to stderr\n")).toBe(
    "cannot write the log file /x/switchboard.log (EACCES); logging to stderr",
  );
});

it("writes every line to the file and only its one-liners, scrubbed, to whatever draws the terminal now", () => {
  dir = mkdtempSync(join(tmpdir(), "switchboard-terminal-log-"));
  const plan = logPlan({ ttyChat: true, stderrTTY: true, format: undefined, level: "info", dataDir: dir });
  const secret = "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw";
  const { log, terminal } = terminalLogger(plan, [secret]);
  const first: string[] = [];
  const chat: string[] = [];
  terminal!.attach((line) => first.push(line));
  log.info("catalog loaded");
  log.warn({ err: new Error(`request to https://api.telegram.org/bot${secret}/getMe failed`) }, "telegram getUpdates failed");
  terminal!.attach((line) => chat.push(line));
  log.error({ session: "console:local", err: new Error("boom") }, "model call failed");
  log.error({ session: "slack:T1:D1" }, "reply undeliverable: the platform refused it for good; it will not be sent again");
  expect(first).toEqual(["! telegram getUpdates failed: request to https://api.telegram.org/bot[redacted]/getMe failed"]);
  expect(chat).toEqual(["! reply undeliverable: the platform refused it for good; it will not be sent again"]);
  const file = readFileSync(join(dir, "switchboard.log"), "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as { msg: string });
  expect(file.map((l) => l.msg)).toEqual([
    "catalog loaded",
    "telegram getUpdates failed",
    "model call failed",
    "reply undeliverable: the platform refused it for good; it will not be sent again",
  ]);
  expect(readFileSync(join(dir, "switchboard.log"), "utf8")).not.toContain(secret);
});

it("is no part of a service's logging: without the terminal chat the plan's logger is used as it is", () => {
  const { terminal } = terminalLogger(logPlan({ ttyChat: false, stderrTTY: false, format: undefined, level: "info", dataDir: "/tmp" }), []);
  expect(terminal).toBeNull();
});
