// A scheduled run is durable: the job fires into the terminal chat (a real `npm run chat` process, the real SDK, the
// strict fake Messages API, SQLite on disk); a SIGKILL between the run's claim and its reply loses nothing, and
// after the restart the reply arrives once — the run is a request like any other, not a second due time.
import { rmSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { lastUserText, reply, startFakeAnthropic, text, toolUse, type FakeAnthropic } from "../fakes/anthropic/server.js";
import { writeDefinitions } from "../helpers/harness.js";
import { processEnv, run, type Proc } from "../integration/child-process.js";
import { SqliteStore } from "../../src/store/sqlite/sqlite-store.js";

let fake: FakeAnthropic;
let defs: ReturnType<typeof writeDefinitions>;
let env: Record<string, string>;
const procs: Proc[] = [];

beforeEach(async () => {
  fake = await startFakeAnthropic();
  defs = writeDefinitions({});
  env = processEnv(fake.url, defs, { LOG_LEVEL: "warn", DEFAULT_TIMEZONE: "Europe/Berlin" });
});
afterEach(async () => {
  for (const p of procs.splice(0)) if (p.child.exitCode === null) p.child.kill("SIGKILL");
  await fake.close();
  rmSync(defs.root, { recursive: true, force: true });
});

function chat(): Proc {
  const p = run("providers/console/cli.ts", ["--jsonl"], env);
  procs.push(p);
  return p;
}

it("a run killed between its claim and its reply replies once after the restart", async () => {
  let entered!: () => void;
  const running = new Promise<void>((r) => (entered = r));
  fake.script(reply(toolUse("schedule", { instruction: "Remind the user to stretch", in_seconds: 1 })), text("I'll remind you in a second."), (req) => {
    // The scheduled run's model call: the process is killed while it waits.
    if (lastUserText(req).includes("[Scheduled run of job")) entered();
    return { hang: true };
  });
  const first = chat();
  first.send({ text: "remind me to stretch in a second" });
  await first.line((l) => l.includes("I'll remind you in a second."));
  await running;
  first.child.kill("SIGKILL");
  await first.exited;

  fake.script(text("Time to stretch!"));
  const second = chat();
  await second.line((l) => l.includes("Time to stretch!"));
  second.child.stdin.end();
  expect(await second.exited).toBe(0);

  const runs = fake.accepted().filter((r) => lastUserText(r).includes("[Scheduled run of job"));
  expect(runs).toHaveLength(2); // the one cut off, and the one after the restart
  const store = new SqliteStore(join(defs.root, "data", "switchboard.db"));
  try {
    const requests = (await store.requests.ofSession("console:local")).filter((r) => r.externalId.startsWith("schedule:"));
    expect(requests.map((r) => r.status)).toEqual(["done"]);
    const [job] = await store.schedules.all(10);
    expect(job).toMatchObject({ status: "done", lastResult: "run" });
    expect((await store.outbox.ofRequest(requests[0]!.id)).map((o) => o.text)).toEqual(["Time to stretch!"]);
  } finally {
    await store.close();
  }
  expect(second.lines.filter((l) => l.includes("Time to stretch!"))).toHaveLength(1);
  expect(fake.rejected()).toEqual([]);
});
