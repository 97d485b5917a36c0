// Group commit's guarantee under SIGKILL: several users' Telegram messages, fetched in one getUpdates batch, are
// stored in one group transaction; the process kills itself right after that commit, before any of their handlers
// was told (test/crash/kill-at-group-commit.ts, preloaded). After the restart (Telegram hands out again whatever the
// dead process had not confirmed) every message is answered exactly once and reached the model once. The real
// `npm start` process with long polling, the real SDKs against the fake Bot API and the strict fake Messages API.
import { rmSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, expect, it } from "vitest";
import { lastUserText, startFakeAnthropic, text, type FakeAnthropic } from "../fakes/anthropic/server.js";
import { startFakeTelegram, type FakeTelegram } from "../fakes/telegram/server.js";
import { writeDefinitions } from "../helpers/harness.js";
import { freePort, processEnv, run, type Proc } from "../integration/child-process.js";

const USERS = [7001, 7002, 7003, 7004, 7005, 7006];

let model: FakeAnthropic;
let tg: FakeTelegram;
let defs: ReturnType<typeof writeDefinitions>;
const procs: Proc[] = [];

beforeEach(async () => {
  model = await startFakeAnthropic();
  model.fallback((req) => text(`answer to ${lastUserText(req)}`));
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
    TELEGRAM_ALLOWED_USERS: USERS.join(","),
    HTTP_PORT: String(await freePort()),
    ...extra,
  });
  const proc = run("src/main.ts", [], env, ["test/crash/kill-at-group-commit.ts"]);
  procs.push(proc);
  return proc;
}

it("a SIGKILL between a group commit of several users' messages and their acknowledgement loses and doubles nothing", async () => {
  // Waiting before the bot polls: its first getUpdates fetches them all at once.
  for (const user of USERS) tg.userMessage({ chatId: user, fromId: user, text: `hello from ${user}` });
  const first = await gateway({ KILL_AT_INBOUND_GROUP: "2" });
  await first.exited;
  const killed = /KILLED after a group commit of (\d+) writes holding (\d+) inbound messages/.exec(first.stderr);
  expect(killed, first.stderr.slice(-3000)).not.toBeNull();
  expect(Number(killed![2])).toBeGreaterThanOrEqual(2);

  await gateway();
  for (const user of USERS) await tg.waitFor("sendMessage", () => tg.sent(user).length >= 1);
  for (const user of USERS)
    expect(
      tg.sent(user).map((m) => m.text),
      String(user),
    ).toEqual([`answer to hello from ${user}`]);
  const asked = model.accepted().map(lastUserText);
  for (const user of USERS)
    expect(
      asked.filter((t) => t === `hello from ${user}`),
      String(user),
    ).toHaveLength(1);
  for (const p of procs) if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill("SIGTERM");
  await Promise.all(procs.map((p) => p.exited));
  const db = new Database(join(defs.root, "data", "switchboard.db"), { readonly: true });
  const stored = db.prepare("SELECT text, count(*) AS n FROM requests GROUP BY text ORDER BY text").all() as Array<{ text: string; n: number }>;
  db.close();
  expect(stored).toEqual(USERS.map((user) => ({ text: `hello from ${user}`, n: 1 })));
});
