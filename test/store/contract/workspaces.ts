// Contract: the files of a session's workspace — saved under the session's lease (a stale holder writes nothing),
// read back as a manifest and as contents, replaced and removed by path, kept apart per session.
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { FencedError, type WorkspaceFile } from "../../../src/store/store.js";
import type { ContractContext } from "./fixtures.js";

const K = "telegram:100";
const OTHER = "telegram:200";
const TTL = 10_000;

function file(path: string, text: string, kind: WorkspaceFile["kind"] = "file"): WorkspaceFile {
  const content = Buffer.from(text);
  return { path, kind, mode: kind === "symlink" ? 0o777 : 0o644, size: content.length, sha256: createHash("sha256").update(content).digest("hex"), content };
}
const entry = ({ content: _content, ...rest }: WorkspaceFile) => rest;

export function workspaceContract(ctx: ContractContext): void {
  describe("workspaces", () => {
    it("saves files and symlinks under the lease and reads back the manifest (by path) and the bytes", async () => {
      const { store } = ctx;
      const lease = (await store.leases.acquire(K, "replica-a", TTL))!;
      const binary: WorkspaceFile = {
        ...file("data/blob.bin", ""),
        content: Buffer.from([0, 255, 10, 13]),
        size: 4,
        sha256: createHash("sha256")
          .update(Buffer.from([0, 255, 10, 13]))
          .digest("hex"),
      };
      const notes = file("notes.txt", "alpha\n");
      const link = file("latest", "notes.txt", "symlink");
      await store.workspaces.save(K, lease, [notes, binary, link], []);
      expect(await store.workspaces.manifest(K)).toEqual([entry(binary), entry(link), entry(notes)]);
      expect(await store.workspaces.files(K, ["data/blob.bin", "missing.txt", "latest"])).toEqual(expect.arrayContaining([binary, link]));
      expect(await store.workspaces.files(K, ["missing.txt"])).toEqual([]);
      expect(await store.workspaces.manifest(OTHER)).toEqual([]);
    });

    it("replaces a path's entry and removes paths in one save", async () => {
      const { store } = ctx;
      const lease = (await store.leases.acquire(K, "replica-a", TTL))!;
      await store.workspaces.save(K, lease, [file("a.txt", "one"), file("b.txt", "two")], []);
      const changed = { ...file("a.txt", "uno!"), mode: 0o755 };
      await store.workspaces.save(K, lease, [changed], ["b.txt", "never-there.txt"]);
      expect(await store.workspaces.manifest(K)).toEqual([entry(changed)]);
      expect(await store.workspaces.files(K, ["a.txt"])).toEqual([changed]);
    });

    it("refuses a holder whose lease was taken over, writing nothing", async () => {
      const { store, clock } = ctx;
      const old = (await store.leases.acquire(K, "replica-a", TTL))!;
      await store.workspaces.save(K, old, [file("a.txt", "first")], []);
      clock.advance(TTL);
      const taken = (await store.leases.acquire(K, "replica-b", TTL))!;
      await expect(store.workspaces.save(K, old, [file("a.txt", "stale")], ["a.txt"])).rejects.toBeInstanceOf(FencedError);
      expect((await store.workspaces.files(K, ["a.txt"]))[0]!.content.toString()).toBe("first");
      await store.workspaces.save(K, taken, [file("a.txt", "second")], []);
      expect((await store.workspaces.files(K, ["a.txt"]))[0]!.content.toString()).toBe("second");
    });

    it("refuses a save without any lease on the session", async () => {
      const { store } = ctx;
      await expect(store.workspaces.save(OTHER, { holder: "nobody", token: 1 }, [file("a.txt", "x")], [])).rejects.toBeInstanceOf(FencedError);
      expect(await store.workspaces.manifest(OTHER)).toEqual([]);
    });
  });
}
