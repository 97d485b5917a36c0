// SQLite only: one process per file, so when the gateway opens it (exclusive), every memory job claim in it was
// made by a process that is gone, and is given up at once, like the leases.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { SqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import { commitStep } from "../helpers/steps.js";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "switchboard-memory-claims-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

it("an exclusive open makes the claims of the process before it claimable at once, counting the cut-off attempt", async () => {
  const file = join(dir, "switchboard.db");
  const now = () => 1_000_000;
  const first = new SqliteStore(file, now, { exclusive: true });
  await commitStep(first, { sessionKey: "console:local", memoryJob: { taskId: "t1", userId: "console:ana" } });
  expect(await first.memories.claimJob("process-1", now(), 120_000, 5)).toMatchObject({ taskId: "t1", attempts: 1 });
  await first.close(); // as good as a SIGKILL for the file: the claim stays in it

  const reader = new SqliteStore(file, now); // not exclusive (a CLI reading): claims are left alone
  expect(await reader.memories.claimJob("reader", now(), 120_000, 5)).toBeNull();
  await reader.close();

  const second = new SqliteStore(file, now, { exclusive: true });
  try {
    expect(await second.memories.claimJob("process-2", now(), 120_000, 5)).toEqual({ taskId: "t1", userId: "console:ana", sessionKey: "console:local", attempts: 2 });
    expect(await second.memories.finishJob("t1", "process-1", null)).toBe(false);
    expect(await second.memories.finishJob("t1", "process-2", null)).toBe(true);
  } finally {
    await second.close();
  }
});
