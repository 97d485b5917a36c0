// Contract: the files role. A message's files are stored with it (or not at all), their bytes once per
// conversation and content, read back by id and by the public id of their download URL, and erased with the user.
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { FencedError, type NewStoredFile } from "../../../src/store/store.js";
import { commitStep, writerFor } from "../../helpers/steps.js";
import { ALICE, BOB, newRequest, outbound, type ContractContext } from "./fixtures.js";

const K = "telegram:42";

export function file(id: string, content: string, over: Partial<NewStoredFile> = {}): NewStoredFile {
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

    it("stores an agent's file with the step that names it: no request, the task owner's, sent by its reply", async () => {
      const { store, clock } = ctx;
      const made = { ...file("a1", "col\n1\n", { name: "report.csv", mime: "text/csv" }), ownerId: BOB };
      const log = { taskId: null, requestId: null, frameId: null, agentSessionId: null, type: "tool_result" as const, payload: { file: "a1" } };
      await commitStep(store, { sessionKey: K, log: [log], files: [made], outbound: [outbound("o1", { text: "the report", fileId: "a1" })] });
      const stored = await store.files.get("a1");
      expect(stored).toMatchObject({ id: "a1", requestId: null, ownerId: BOB, sessionKey: K, name: "report.csv", mime: "text/csv", createdAt: clock.t });
      expect(await store.files.byPublicId(made.publicId)).toEqual(stored);
      expect((await store.files.bytes(K, made.sha256))?.toString()).toBe("col\n1\n");
      expect((await store.outbox.pending(K)).map((o) => [o.id, o.text, o.fileId])).toEqual([["o1", "the report", "a1"]]);
      expect(await store.files.sessionBytes(K)).toBe(made.size);
    });

    it("stores nothing of a fenced step's files, nor its file replies", async () => {
      const { store } = ctx;
      const stale = await writerFor(store, K, "replica-a");
      await store.leases.release(K, "replica-a", stale.fence.token);
      await writerFor(store, K, "replica-b");
      const made = { ...file("a1", "made"), ownerId: ALICE };
      await expect(stale.commit({ files: [made], outbound: [outbound("o1", { fileId: "a1" })] })).rejects.toBeInstanceOf(FencedError);
      expect(await store.files.get("a1")).toBeNull();
      expect(await store.files.bytes(K, made.sha256)).toBeNull();
      expect(await store.outbox.pending(K)).toEqual([]);
    });

    it("lists a conversation's files, received and made, oldest first", async () => {
      const { store, clock } = ctx;
      await store.requests.insert(newRequest("r1", K, { files: [file("f1", "photo")] }));
      clock.advance(5);
      await commitStep(store, {
        sessionKey: K,
        files: [
          { ...file("a1", "chart"), ownerId: ALICE },
          { ...file("a2", "photo"), ownerId: ALICE },
        ],
      });
      await store.requests.insert(newRequest("r2", "telegram:7", { files: [file("f9", "elsewhere")] }));
      expect((await store.files.ofSession(K)).map((f) => f.id)).toEqual(["f1", "a1", "a2"]);
      expect(await store.files.sessionBytes(K)).toBe("photo".length + "chart".length);
      expect(await store.files.ofRequest("r1")).toHaveLength(1);
    });
  });
}
