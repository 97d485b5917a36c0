// Contract: the files role. A message's files are stored with it (or not at all), their bytes once per
// conversation and content, read back by id and by the public id of their download URL, and erased with the user.
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { NewStoredFile } from "../../../src/store/store.js";
import { ALICE, BOB, newRequest, type ContractContext } from "./fixtures.js";

const K = "telegram:42";

function file(id: string, content: string, over: Partial<NewStoredFile> = {}): NewStoredFile {
  const bytes = Buffer.from(content);
  return {
    id,
    publicId: `file_${id.padEnd(24, "x")}`,
    sha256: createHash("sha256").update(bytes).digest("hex"),
    name: `${id}.txt`,
    mime: "text/plain",
    kind: "text",
    size: bytes.length,
    voice: false,
    bytes,
    ...over,
  };
}

export function fileContract(ctx: ContractContext): void {
  describe("files", () => {
    it("stores a message's files with it: described by id and public id, bytes by content, in order", async () => {
      const { store, clock } = ctx;
      const result = await store.requests.insert(
        newRequest("r1", K, { files: [file("f1", "hello"), file("f2", "voice", { kind: "audio", mime: "audio/ogg", voice: true })] }),
      );
      expect(result.status).toBe("inserted");
      const files = await store.files.ofRequest("r1");
      expect(files.map((f) => [f.id, f.kind, f.voice, f.ownerId, f.sessionKey, f.requestId, f.createdAt])).toEqual([
        ["f1", "text", false, ALICE, K, "r1", clock.t],
        ["f2", "audio", true, ALICE, K, "r1", clock.t],
      ]);
      expect(await store.files.get("f2")).toEqual(files[1]);
      expect(await store.files.byPublicId(file("f1", "").publicId)).toEqual(files[0]);
      expect(await store.files.get("nope")).toBeNull();
      expect((await store.files.bytes(K, files[0]!.sha256))?.toString()).toBe("hello");
    });

    it("keeps the same bytes once per conversation, and counts them once", async () => {
      const { store } = ctx;
      await store.requests.insert(newRequest("r1", K, { files: [file("f1", "same bytes")] }));
      await store.requests.insert(newRequest("r2", K, { files: [file("f2", "same bytes"), file("f3", "other")] }));
      expect(await store.files.sessionBytes(K)).toBe("same bytes".length + "other".length);
      expect(await store.files.sessionBytes("telegram:none")).toBe(0);
    });

    it("stores nothing of a duplicate message's files", async () => {
      const { store } = ctx;
      await store.requests.insert(newRequest("r1", K, { externalId: "m1", files: [file("f1", "first")] }));
      const again = await store.requests.insert(newRequest("r2", K, { externalId: "m1", files: [file("f2", "second")] }));
      expect(again.status).toBe("duplicate");
      expect(await store.files.get("f2")).toBeNull();
      expect(await store.files.sessionBytes(K)).toBe("first".length);
    });

    it("erases a user's files and their bytes with their conversations", async () => {
      const { store } = ctx;
      await store.requests.insert(newRequest("r1", K, { files: [file("f1", "alice's")] }));
      await store.requests.insert(newRequest("r2", "telegram:7", { userId: BOB, files: [file("f2", "bob's")] }));
      const sha = (await store.files.get("f1"))!.sha256;
      await store.userData.erase(ALICE);
      expect(await store.files.get("f1")).toBeNull();
      expect(await store.files.bytes(K, sha)).toBeNull();
      expect(await store.files.get("f2")).not.toBeNull();
    });

    it("exports a user's files with their bytes, and erases the ones they sent into another's conversation", async () => {
      const { store } = ctx;
      const group = "telegram:-100";
      await store.requests.insert(newRequest("r1", group, { userId: BOB, files: [file("f1", "bob's chart")] }));
      await store.requests.insert(newRequest("r2", group, { userId: ALICE, files: [file("f2", "alice's photo")] }));
      const exported = await store.userData.export(ALICE);
      const files = exported.sessions.find((s) => s.sessionKey === group)!.files;
      expect(files.map((f) => [f.id, Buffer.from(f.contentBase64, "base64").toString()])).toEqual([["f2", "alice's photo"]]);
      const sha = (await store.files.get("f2"))!.sha256;
      await store.userData.erase(ALICE);
      expect(await store.files.get("f2")).toBeNull();
      expect(await store.files.bytes(group, sha)).toBeNull();
      expect((await store.files.bytes(group, (await store.files.get("f1"))!.sha256))?.toString()).toBe("bob's chart");
    });
  });
}
