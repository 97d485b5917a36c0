// Memory extraction is durable: queued with the task's end, it survives a SIGKILL in the middle of its model call
// and runs after the restart exactly once (one extraction call, one set of memories). A real `npm run chat`
// process, the real SDK, the strict fake Messages API, SQLite on disk.
import { rmSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { reply, startFakeAnthropic, text, toolUse, type FakeAnthropic, type MessagesRequest } from "../fakes/anthropic/server.js";
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
  env = processEnv(fake.url, defs, { MEMORY: "on", MEMORY_MODEL: "claude-memory-test", LOG_LEVEL: "warn" });
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

const isExtraction = (req: MessagesRequest) => (req as { tool_choice?: { name?: string } }).tool_choice?.name === "save_memories";

it("an extraction cut off by SIGKILL runs after the restart exactly once", async () => {
  let entered!: () => void;
  const extracting = new Promise<void>((r) => (entered = r));
  fake.script(text("Nice to meet you, Ana!"), () => {
    entered();
    return { hang: true };
  });
  const first = chat();
  first.send({ text: "Hi, I'm Ana from Lisbon; I'm planning a cycling trip in June." });
  await first.line((l) => l.includes("Nice to meet you, Ana!"));
  await extracting;
  first.child.kill("SIGKILL");
  await first.exited;

  // The restarted process finds the job it was running and runs it again, with nothing new from the user.
  fake.script(
    reply(
      toolUse("save_memories", {
        memories: [
          { text: "Name is Ana.", kind: "identity" },
          { text: "Plans a cycling trip in June.", kind: "project" },
        ],
      }),
    ),
  );
  const second = chat();
  second.child.stdin.end();
  expect(await second.exited).toBe(0);

  // And a third start finds nothing left to do.
  const third = chat();
  third.child.stdin.end();
  expect(await third.exited).toBe(0);

  const extractions = fake.accepted().filter(isExtraction);
  expect(extractions).toHaveLength(2); // the one cut off, and the one after the restart
  expect(JSON.stringify(extractions[1]!.messages)).toContain("cycling trip in June");
  const store = new SqliteStore(join(defs.root, "data", "switchboard.db"));
  try {
    const user = (await store.requests.ofSession("console:local"))[0]!.userId;
    expect((await store.memories.list(user)).map((m) => m.text)).toEqual(["Name is Ana.", "Plans a cycling trip in June."]);
    expect(await store.memories.pendingJobs()).toEqual([]);
  } finally {
    await store.close();
  }
  expect(fake.rejected()).toEqual([]);
});
