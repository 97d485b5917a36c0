// `npm run user -- export|delete <user>`: one user's data out of the gateway's database, or erased from it, run
// as the admin runs it (a child process on a DATA_DIR), with another user's data beside it.
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import type { UserExport } from "../../src/store/store.js";
import { commitStep } from "../helpers/steps.js";
import { nodeArgs } from "../integration/child-process.js";

const ROOT = new URL("../../", import.meta.url).pathname;
const ALICE = "telegram:1001";
const BOB = "slack:T1:U2";

let root: string;
let dataDir: string;
let dbFile: string;
beforeEach(async () => {
  root = mkdtempSync(join(tmpdir(), "switchboard-user-"));
  dataDir = join(root, "data");
  dbFile = join(dataDir, "switchboard.db");
  await seed();
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

/** Alice and Bob each in their own chat, both in one group chat, Alice in an HTTP session she owns; each with memories. */
async function seed() {
  const store = new SqliteStore(dbFile);
  let n = 0;
  const say = async (sessionKey: string, userId: string, text: string) => {
    const owned = sessionKey.startsWith("http:");
    if (!owned) await store.sessions.open(sessionKey, () => `as_${sessionKey}`);
    const id = `req_${++n}`;
    await store.requests.insert({
      id,
      sessionKey,
      externalId: `m${n}`,
      kind: "message",
      userId,
      text,
      ...(owned ? { claimSession: { mainAgentSessionId: `as_${n}` } } : {}),
    });
    await commitStep(store, {
      sessionKey,
      request: { id, status: "done" },
      outbound: [{ id: `out_${n}`, requestId: id, taskId: null, agent: "main", depth: 1, text: `reply to ${text}`, kind: "message" }],
    });
  };
  await say("telegram:1001", ALICE, "alice in private");
  await say("telegram:-500", ALICE, "alice in the group");
  await say("telegram:-500", BOB, "bob in the group");
  await say("slack:T1:D2", BOB, "bob in private");
  await say("http:5f0c2d9e-1111-4222-8333-944445555666", ALICE, "alice over http");
  await store.memories.save(ALICE, {
    add: [
      { id: "mem_a1", text: "Alice lives in Porto", kind: "identity" },
      { id: "mem_a2", text: "Alice plans a trip" },
    ],
  });
  await store.memories.save(BOB, { add: [{ id: "mem_b1", text: "Bob is allergic to peanuts" }] });
  await store.close();
}

/** Runs the CLI to its end (stdout and stderr fully read). */
function user(...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [...nodeArgs("src/cli/user.ts"), ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", DATA_DIR: dataDir },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
  child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
  return new Promise((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

async function readBack<T>(read: (store: SqliteStore) => Promise<T>): Promise<T> {
  const store = new SqliteStore(dbFile);
  try {
    return await read(store);
  } finally {
    await store.close();
  }
}

const texts = (userId: string) => readBack(async (s) => (await s.memories.list(userId)).map((m) => m.text));

describe("npm run user -- export", () => {
  it("writes everything stored about that user, and nothing about anyone else, as pretty JSON", async () => {
    const { code, stdout, stderr } = await user("export", ALICE);
    expect(stderr).toBe("");
    expect(code).toBe(0);
    expect(stdout).toMatch(/^\{\n {2}"userId": "telegram:1001",/);
    const data = JSON.parse(stdout) as UserExport;
    expect(data.userId).toBe(ALICE);
    expect(data.memories.map((m) => m.text)).toEqual(["Alice lives in Porto", "Alice plans a trip"]);
    const requests = data.sessions.flatMap((s) => s.requests);
    expect(requests.map((r) => r.text).sort()).toEqual(["alice in private", "alice in the group", "alice over http"]);
    expect(requests.every((r) => r.userId === ALICE)).toBe(true);
    expect(stdout).not.toContain("Bob");
    expect(stdout).not.toContain("bob in");
    expect(stdout).not.toContain(BOB);
  });

  it("--out writes the same JSON to a file only its owner can read", async () => {
    const file = join(root, "alice.json");
    const { code, stdout, stderr } = await user("export", ALICE, "--out", file);
    expect(code).toBe(0);
    expect(stdout).toBe("");
    expect(stderr).toMatch(/^wrote .*alice\.json: 2 memories, 3 sessions \(2 theirs alone\), 3 requests/);
    expect((JSON.parse(readFileSync(file, "utf8")) as UserExport).memories).toHaveLength(2);
    expect(statSync(file).mode & 0o077).toBe(0);
  });

  it("says so when nothing is stored about the user", async () => {
    const { code, stdout, stderr } = await user("export", "1001");
    expect(code).toBe(0);
    expect((JSON.parse(stdout) as UserExport).memories).toEqual([]);
    expect(stderr).toContain("nothing is stored about 1001 (user ids carry their source, e.g. telegram:4242");
  });
});

describe("npm run user -- delete", () => {
  it("without --yes says what would go, deletes nothing and exits 1", async () => {
    const { code, stdout } = await user("delete", ALICE);
    expect(code).toBe(1);
    expect(stdout).toMatch(new RegExp(`^${ALICE}: 2 memories, 3 sessions \\(2 theirs alone\\), 3 requests, 0 tasks, \\d+ log entries, \\d+ replies, 0 approvals\\.\\n`));
    expect(stdout).toContain(`Nothing was deleted. To erase all of it, run: npm run user -- delete ${ALICE} --yes`);
    expect(await texts(ALICE)).toHaveLength(2);
    expect(await readBack((s) => s.requests.ofSession("telegram:1001"))).toHaveLength(1);
    expect(await readBack((s) => s.requests.ofSession("http:5f0c2d9e-1111-4222-8333-944445555666"))).toHaveLength(1);
  });

  it("with --yes erases the user's data, prints the counts, and leaves the other user's data alone", async () => {
    const { code, stdout, stderr } = await user("delete", ALICE, "--yes");
    expect(stderr).toBe("");
    expect(code).toBe(0);
    expect(stdout).toMatch(new RegExp(`^deleted everything stored about ${ALICE} \\(.*\\d.*\\)\\n$`));
    const gone = await readBack((s) => s.userData.export(ALICE));
    expect(gone.memories).toEqual([]);
    expect(gone.sessions.flatMap((s) => s.requests)).toEqual([]);
    expect(gone.approvals).toEqual([]);
    expect(await readBack((s) => s.sessions.find("http:5f0c2d9e-1111-4222-8333-944445555666"))).toBeNull();
    expect(await texts(BOB)).toEqual(["Bob is allergic to peanuts"]);
    const group = await readBack((s) => s.requests.ofSession("telegram:-500"));
    expect(group.map((r) => r.text)).toEqual(["bob in the group"]);
    expect((await readBack((s) => s.requests.ofSession("slack:T1:D2"))).map((r) => r.text)).toEqual(["bob in private"]);
    // Run again: nothing left, and it says so.
    const again = await user("delete", ALICE, "--yes");
    expect(again.code).toBe(0);
    expect(again.stdout).toBe(`nothing is stored about ${ALICE}; nothing to delete\n`);
  });

  it("refuses while the gateway holds the database, saying to stop it first, and deletes nothing", async () => {
    // What a running gateway holds: the store opened with its process lock.
    const gateway = new SqliteStore(dbFile, Date.now, { exclusive: true });
    try {
      const { code, stderr } = await user("delete", ALICE, "--yes");
      expect(code).toBe(1);
      expect(stderr).toContain(`Switchboard is running on DATA_DIR=${dataDir}`);
      expect(stderr).toContain("Stop it first");
      expect((await gateway.memories.list(ALICE)).length).toBe(2);
      // Reading beside it works.
      const exported = await user("export", ALICE);
      expect(exported.code).toBe(0);
      expect((JSON.parse(exported.stdout) as UserExport).memories).toHaveLength(2);
    } finally {
      await gateway.close();
    }
  });
});

describe("usage", () => {
  it("exits 2 with the usage text for an unknown command, a missing user or a stray option", async () => {
    for (const args of [
      [],
      ["frobnicate", ALICE],
      ["export"],
      ["delete"],
      ["export", ALICE, "--yes"],
      ["delete", ALICE, "--out", "x.json"],
      ["export", ALICE, "--force"],
      ["export", ALICE, "extra"],
    ]) {
      const { code, stdout, stderr } = await user(...args);
      expect(code, args.join(" ")).toBe(2);
      expect(stdout).toBe("");
      expect(stderr).toContain("usage: npm run user -- export <user> [--out FILE]");
    }
  });

  it("exits 1 naming the place when there is no database", async () => {
    rmSync(dataDir, { recursive: true, force: true });
    const { code, stderr } = await user("export", ALICE);
    expect(code).toBe(1);
    expect(stderr).toContain(`no database at ${dbFile}`);
  });
});
