// A chat message is answered exactly once across a SIGKILL between the batch that stored it (one round trip on
// PostgreSQL: the conversation's lock, the look for a twin, the insert under the owner rule) and everything that
// follows its commit: the session's wake-up and the platform's confirmation of the update. The real `npm start`
// process (long polling) on PostgreSQL against the fake Bot API (which hands an unconfirmed update out again, as
// Telegram does) and the strict fake Messages API; the process kills itself right after the commit
// (test/replicas/kill-after-inbound-batch.ts, preloaded). After the restart the stored request is picked up, the
// redelivered update is found a duplicate at the door, and the user gets one answer from one model call.
import { afterEach, beforeEach, expect, it } from "vitest";
import { startFakeAnthropic, text, type FakeAnthropic } from "../fakes/anthropic/server.js";
import { startFakeTelegram, type FakeTelegram } from "../fakes/telegram/server.js";
import { writeDefinitions } from "../helpers/harness.js";
import { adminQuery, freshDatabase, postgresSkipReason, type FreshDatabase } from "../helpers/postgres.js";
import { freePort, processEnv, run, type Proc } from "../integration/child-process.js";

const ALICE = 1001;
const skip = postgresSkipReason();

let model: FakeAnthropic;
let tg: FakeTelegram;
let defs: ReturnType<typeof writeDefinitions>;
let db: FreshDatabase;
const procs: Proc[] = [];

beforeEach(async () => {
  if (skip) return;
  model = await startFakeAnthropic();
  tg = await startFakeTelegram();
  defs = writeDefinitions({});
  db = await freshDatabase();
});
afterEach(async (ctx) => {
  if (skip) return;
  if (ctx.task.result?.state === "fail") for (const [i, p] of procs.entries()) process.stderr.write(`--- gateway process ${i + 1} log ---\n${p.stderr.slice(-3000)}\n`);
  for (const p of procs.splice(0)) if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill("SIGKILL");
  await tg.close();
  await model.close();
  await db.drop();
});

async function gateway(extra: Record<string, string> = {}): Promise<Proc> {
  const env = processEnv(model.url, defs, {
    TELEGRAM_BOT_TOKEN: tg.token,
    TELEGRAM_API_ROOT: tg.url,
    TELEGRAM_ALLOWED_USERS: String(ALICE),
    HTTP_PORT: String(await freePort()),
    DATABASE_URL: db.url,
    ...extra,
  });
  const proc = run("src/main.ts", [], env, ["test/replicas/kill-after-inbound-batch.ts"]);
  procs.push(proc);
  return proc;
}

it.skipIf(skip !== null)(
  `a SIGKILL right after the batch that stored a message committed: one answer after the restart${skip ? ` (skipped: ${skip})` : ""}`,
  async () => {
    model.script(text("Hello, Alice."));
    tg.userMessage({ chatId: ALICE, fromId: ALICE, text: "hi" });
    const first = await gateway({ KILL_AFTER_INBOUND: "1" });
    await first.exited;
    expect(first.stderr, first.stderr.slice(-3000)).toMatch(/KILLED after the inbound request \S+ committed \(owner rule mine-or-free\)/);
    // Committed and nothing else: stored, not answered, the model never asked.
    const stored = await adminQuery<{ status: string; text: string }>(db, "SELECT status, text FROM requests");
    expect(stored.rows).toEqual([{ status: "pending", text: "hi" }]);
    expect(tg.sent(ALICE)).toEqual([]);
    expect(model.accepted()).toEqual([]);

    const second = await gateway();
    await tg.waitFor("sendMessage", () => tg.sent(ALICE).length >= 1);
    second.child.kill("SIGTERM");
    expect(await second.exited).toBe(0);
    expect(tg.sent(ALICE).map((m) => m.text)).toEqual(["Hello, Alice."]);
    expect(model.accepted()).toHaveLength(1);
    expect(model.rejected()).toEqual([]);
    // The update handed out again was the same message, not a second request.
    expect((await adminQuery<{ n: number }>(db, "SELECT count(*)::int AS n FROM requests")).rows).toEqual([{ n: 1 }]);
    expect((await adminQuery(db, "SELECT status FROM requests")).rows).toEqual([{ status: "done" }]);
  },
  // Two processes start one after the other: on a loaded machine that alone takes most of the default 30 s.
  120_000,
);
