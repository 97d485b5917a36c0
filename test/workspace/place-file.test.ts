// placeFile: a received file lands in the top folder of the session's workspace under a safe, free name, within the
// limits, and is saved to the database under the session's lease (so another replica materialises it).
import { mkdtempSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { afterEach, beforeEach, expect, it } from "vitest";
import { SqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import type { SessionWriter } from "../../src/store/store.js";
import { LocalWorkspaces } from "../../src/workspace/local.js";
import { WorkspaceSync } from "../../src/workspace/sync.js";

const K = "telegram:42";
let root: string;
let store: SqliteStore;
let writer: SessionWriter;
let workspaces: LocalWorkspaces;
const limits = { maxBytes: 1024 * 1024, maxFiles: 10 };

beforeEach(async () => {
  root = mkdtempSync(join(tmpdir(), "switchboard-place-"));
  store = new SqliteStore(join(root, "db.sqlite"));
  writer = store.steps.writer((await store.leases.acquire(K, "replica-a", 60_000))!);
  const sync = new WorkspaceSync({ store, limits, owner: null, log: pino({ level: "silent" }) });
  workspaces = new LocalWorkspaces({ dataDir: join(root, "data"), limits, owner: null, sync });
});
afterEach(async () => {
  await store.close();
  rmSync(root, { recursive: true, force: true });
});

it("places a file under a free name, saved to the database", async () => {
  expect(await workspaces.placeFile(writer, "report.pdf", Buffer.from("one"))).toEqual({ ok: true, path: "/workspace/report.pdf" });
  expect(await workspaces.placeFile(writer, "report.pdf", Buffer.from("two"))).toEqual({ ok: true, path: "/workspace/report (2).pdf" });
  expect(readFileSync(join(workspaces.dirOf(K), "report (2).pdf"), "utf8")).toBe("two");
  expect((await store.workspaces.manifest(K)).map((e) => e.path)).toEqual(["report (2).pdf", "report.pdf"]);
});

it("keeps a hostile name in the top folder: no folders, no control characters", async () => {
  expect(await workspaces.placeFile(writer, "../../etc/passwd\n", Buffer.from("x"))).toEqual({ ok: true, path: "/workspace/passwd_" });
  expect(await workspaces.placeFile(writer, "..", Buffer.from("x"))).toEqual({ ok: true, path: "/workspace/file" });
});

it("refuses a file past the workspace's limits, placing nothing", async () => {
  const placed = await workspaces.placeFile(writer, "big.bin", Buffer.alloc(limits.maxBytes + 1));
  expect(placed).toMatchObject({ ok: false, reason: expect.stringContaining("the workspace has no room for big.bin") });
  expect(await store.workspaces.manifest(K)).toEqual([]);
});

it("places the same bytes under the same name once: a turn run again after a crash finds its file where it put it", async () => {
  expect(await workspaces.placeFile(writer, "report.pdf", Buffer.from("one"))).toEqual({ ok: true, path: "/workspace/report.pdf" });
  expect(await workspaces.placeFile(writer, "report.pdf", Buffer.from("two"))).toEqual({ ok: true, path: "/workspace/report (2).pdf" });
  expect(await workspaces.placeFile(writer, "report.pdf", Buffer.from("two"))).toEqual({ ok: true, path: "/workspace/report (2).pdf" });
  expect(await workspaces.placeFile(writer, "report.pdf", Buffer.from("one"))).toEqual({ ok: true, path: "/workspace/report.pdf" });
  // A symlink under the name is never taken for the file, nor followed.
  symlinkSync(join(root, "elsewhere"), join(workspaces.dirOf(K), "notes.txt"));
  expect(await workspaces.placeFile(writer, "notes.txt", Buffer.from("n"))).toEqual({ ok: true, path: "/workspace/notes (2).txt" });
  expect((await store.workspaces.manifest(K)).map((e) => e.path)).toEqual(["notes (2).txt", "report (2).pdf", "report.pdf"]);
});
