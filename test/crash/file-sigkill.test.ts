// A file an agent sends is delivered exactly once across a SIGKILL between the step that stored it and its
// delivery. The real `npm start` process (long polling) against the fake Bot API and the strict fake Messages API;
// the process kills itself right after the step commit that stored the file (test/crash/kill-after-file-step.ts,
// preloaded). After the restart the outbox delivers what was committed and not sent, and the turn goes on from
// the committed tool result: the file arrives once, the answer once, and the tool is not run again.
import { rmSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { reply, startFakeAnthropic, text, toolUse, type FakeAnthropic } from "../fakes/anthropic/server.js";
import { startFakeTelegram, type FakeTelegram } from "../fakes/telegram/server.js";
import { writeDefinitions } from "../helpers/harness.js";
import { freePort, processEnv, run, type Proc } from "../integration/child-process.js";
import { SqliteStore } from "../../src/store/sqlite/sqlite-store.js";

const ALICE = 1001;

let model: FakeAnthropic;
let tg: FakeTelegram;
let defs: ReturnType<typeof writeDefinitions>;
const procs: Proc[] = [];

beforeEach(async () => {
  model = await startFakeAnthropic();
  tg = await startFakeTelegram();
  defs = writeDefinitions({});
});
afterEach(async (ctx) => {
  if (ctx.task.result?.state === "fail") for (const [i, p] of procs.entries()) process.stderr.write(`--- gateway process ${i + 1} log ---\n${p.stderr.slice(-3000)}\n`);
  for (const p of procs.splice(0)) if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill("SIGKILL");
  await tg.close();
  await model.close();
  rmSync(defs.root, { recursive: true, force: true });
});

async function gateway(extra: Record<string, string> = {}): Promise<Proc> {
  const env = processEnv(model.url, defs, {
    TELEGRAM_BOT_TOKEN: tg.token,
    TELEGRAM_API_ROOT: tg.url,
    TELEGRAM_ALLOWED_USERS: String(ALICE),
    HTTP_PORT: String(await freePort()),
    ...extra,
  });
  const proc = run("src/main.ts", [], env, ["test/crash/kill-after-file-step.ts"]);
  procs.push(proc);
  return proc;
}

it("a SIGKILL between the step that stored a sent file and its delivery: the file arrives once after the restart", async () => {
  model.script(reply(toolUse("send_file", { filename: "plan.md", content: "# Plan\n- pack\n", caption: "Your plan" })), text("Here is your plan."));
  tg.userMessage({ chatId: ALICE, fromId: ALICE, text: "write me a plan" });
  const first = await gateway({ KILL_AFTER_FILE_STEP: "1" });
  await first.exited;
  expect(first.stderr, first.stderr.slice(-3000)).toContain("KILLED after the step that stored 1 file(s) committed");
  expect(tg.sentFiles(ALICE)).toEqual([]);

  const second = await gateway();
  await tg.waitFor("sendMessage", () => tg.sent(ALICE).length >= 1);
  expect(tg.sent(ALICE).map((m) => m.text)).toEqual(["Here is your plan."]);
  expect(tg.sentFiles(ALICE).map((f) => [f.method, f.filename, f.caption, f.bytes.toString()])).toEqual([["sendDocument", "plan.md", "Your plan", "# Plan\n- pack\n"]]);
  // The tool ran once: the model was asked for it once, and once more (after the restart) for the answer.
  expect(model.accepted()).toHaveLength(2);
  expect(model.rejected()).toEqual([]);
  second.child.kill("SIGTERM");
  expect(await second.exited).toBe(0);
  expect(tg.sentFiles(ALICE)).toHaveLength(1);
  const store = new SqliteStore(join(defs.root, "data", "switchboard.db"));
  try {
    expect((await store.files.ofSession(`telegram:${ALICE}`)).map((f) => f.name)).toEqual(["plan.md"]);
    expect(await store.outbox.pending()).toEqual([]);
  } finally {
    await store.close();
  }
});
