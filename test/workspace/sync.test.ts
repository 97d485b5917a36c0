// The folder ⇄ database sync against hostile contents: a symlink planted towards /etc/passwd or DATA_DIR is never
// saved; rows a tampered database holds (`..`, an absolute path, a symlink leading out) are never written; a
// command that left the workspace over its limits has its new files left unsaved; two sessions stay apart.
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { afterEach, beforeEach, expect, it } from "vitest";
import { SqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import type { Fence, WorkspaceFile } from "../../src/store/store.js";
import { sha256 } from "../../src/workspace/scan.js";
import { WorkspaceSync } from "../../src/workspace/sync.js";

const A = "telegram:1";
const B = "telegram:2";
let root: string;
let store: SqliteStore;
let sync: WorkspaceSync;
let fenceA: Fence;
let fenceB: Fence;
const limits = { maxBytes: 1000, maxFiles: 5 };
const dir = (name: string) => {
  const d = join(root, "data", "workspaces", name);
  mkdirSync(d, { recursive: true });
  return d;
};
const row = (path: string, text: string, kind: WorkspaceFile["kind"] = "file"): WorkspaceFile => ({
  path,
  kind,
  mode: 0o644,
  size: text.length,
  sha256: sha256(Buffer.from(text)),
  content: Buffer.from(text),
});

beforeEach(async () => {
  root = mkdtempSync(join(tmpdir(), "switchboard-sync-"));
  store = new SqliteStore(join(root, "db.sqlite"));
  fenceA = (await store.leases.acquire(A, "replica-a", 60_000))!;
  fenceB = (await store.leases.acquire(B, "replica-a", 60_000))!;
  sync = new WorkspaceSync({ store, limits, owner: null, log: pino({ level: "silent" }) });
});
afterEach(async () => {
  await store.close();
  rmSync(root, { recursive: true, force: true });
});

it("saves a command's files and an inside symlink, never one leading to /etc/passwd or DATA_DIR", async () => {
  const ws = dir("a");
  writeFileSync(join(ws, "out.txt"), "result");
  symlinkSync("out.txt", join(ws, "latest"));
  symlinkSync("/etc/passwd", join(ws, "pw"));
  symlinkSync(join(root, "data"), join(ws, "data"));
  symlinkSync("../../..", join(ws, "up"));
  await sync.save(A, ws, { all: true }, fenceA);
  expect((await store.workspaces.manifest(A)).map((e) => `${e.path}:${e.kind}`)).toEqual(["latest:symlink", "out.txt:file"]);
});

it("materialises only safe rows of a tampered database, and removes what is not stored", async () => {
  await store.workspaces.save(
    A,
    fenceA,
    [row("ok/note.txt", "fine"), row("../escape.txt", "out"), row("/tmp/abs.txt", "out"), row("pw", "/etc/passwd", "symlink"), row("ok/link", "note.txt", "symlink")],
    [],
  );
  const ws = dir("a2");
  writeFileSync(join(ws, "stale.txt"), "not stored");
  await sync.prepare(A, ws, fenceA);
  expect(readFileSync(join(ws, "ok/note.txt"), "utf8")).toBe("fine");
  expect(readlinkSync(join(ws, "ok/link"))).toBe("note.txt");
  expect(lstatSync(join(ws, "pw"), { throwIfNoEntry: false })).toBeUndefined();
  expect(existsSync(join(root, "data", "workspaces", "escape.txt"))).toBe(false);
  expect(existsSync("/tmp/abs.txt")).toBe(false);
  expect(existsSync(join(ws, "stale.txt"))).toBe(false);
});

it("does not follow a symlink planted where a stored folder goes", async () => {
  await store.workspaces.save(A, fenceA, [row("sub/file.txt", "inside")], []);
  const ws = dir("a3");
  const outside = join(root, "outside");
  mkdirSync(outside);
  symlinkSync(outside, join(ws, "sub"));
  await sync.prepare(A, ws, fenceA);
  expect(readFileSync(join(ws, "sub/file.txt"), "utf8")).toBe("inside");
  expect(lstatSync(join(ws, "sub")).isDirectory()).toBe(true);
  expect(existsSync(join(outside, "file.txt"))).toBe(false);
});

it("leaves a command's new files unsaved while the workspace is over its limits, and saves removals", async () => {
  const ws = dir("a4");
  writeFileSync(join(ws, "small.txt"), "x");
  await sync.save(A, ws, { all: true }, fenceA);
  rmSync(join(ws, "small.txt"));
  writeFileSync(join(ws, "huge.bin"), Buffer.alloc(limits.maxBytes + 1));
  await sync.save(A, ws, { all: true }, fenceA);
  expect(await store.workspaces.manifest(A)).toEqual([]);
});

it("keeps two sessions' files apart", async () => {
  const [wa, wb] = [dir("s-a"), dir("s-b")];
  writeFileSync(join(wa, "mine.txt"), "a's");
  await sync.save(A, wa, { paths: ["/workspace/mine.txt"] }, fenceA);
  await sync.prepare(B, wb, fenceB);
  expect(existsSync(join(wb, "mine.txt"))).toBe(false);
  expect(await store.workspaces.manifest(B)).toEqual([]);
});
