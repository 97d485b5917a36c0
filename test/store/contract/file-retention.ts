// Contract: the files role's retention (FILE_RETENTION_DAYS). The bytes of files stored before the cutoff go,
// their descriptions stay marked expired (the log still names them); what is still needed stays: a file of a
// request not yet finished, the files of a conversation with a reply waiting in the outbox, bytes stored again.
import { describe, expect, it } from "vitest";
import { commitStep } from "../../helpers/steps.js";
import { file } from "./files.js";
import { ALICE, newRequest, outbound, type ContractContext } from "./fixtures.js";

const K = "telegram:42";
const DAY = 86_400_000;

export function fileRetentionContract(ctx: ContractContext): void {
  describe("files: retention", () => {
    /** Stores request `id` with `files` and, unless `finished` is false, marks it done. */
    async function received(id: string, files: ReturnType<typeof file>[], { finished = true, key = K } = {}): Promise<void> {
      expect((await ctx.store.requests.insert(newRequest(id, key, { files }))).status).toBe("inserted");
      if (finished) await commitStep(ctx.store, { sessionKey: key, request: { id, status: "done" } });
    }

    it("deletes the bytes of old files and marks them expired; newer files keep theirs", async () => {
      const { store, clock } = ctx;
      await received("r1", [file("f1", "old photo"), file("f2", "old pdf")]);
      clock.advance(2 * DAY);
      await received("r2", [file("f3", "new photo")]);
      const cutoff = clock.t - DAY;
      clock.advance(1000);
      expect(await store.files.expire(cutoff, clock.t, 100)).toEqual({ contents: 2, files: 2, bytes: "old photo".length + "old pdf".length });
      const old = (await store.files.get("f1"))!;
      expect(old).toMatchObject({ name: "f1.txt", expiredAt: clock.t });
      expect(await store.files.bytes(K, old.sha256)).toBeNull();
      const kept = (await store.files.get("f3"))!;
      expect(kept.expiredAt).toBeNull();
      expect((await store.files.bytes(K, kept.sha256))?.toString()).toBe("new photo");
      expect(await store.files.sessionBytes(K)).toBe("new photo".length);
      expect(await store.files.expire(cutoff, clock.t, 100)).toEqual({ contents: 0, files: 0, bytes: 0 });
    });

    it("keeps old bytes that a newer file stored again, counting their age from then", async () => {
      const { store, clock } = ctx;
      await received("r1", [file("f1", "same chart")]);
      clock.advance(2 * DAY);
      await received("r2", [file("f2", "same chart")]);
      expect(await store.files.expire(clock.t - DAY, clock.t, 100)).toEqual({ contents: 0, files: 0, bytes: 0 });
      expect((await store.files.bytes(K, (await store.files.get("f1"))!.sha256))?.toString()).toBe("same chart");
      clock.advance(2 * DAY);
      expect(await store.files.expire(clock.t - DAY, clock.t, 100)).toEqual({ contents: 1, files: 2, bytes: "same chart".length });
    });

    it("keeps the files of a request not yet finished", async () => {
      const { store, clock } = ctx;
      await received("r1", [file("f1", "queued")], { finished: false });
      clock.advance(2 * DAY);
      expect(await store.files.expire(clock.t - DAY, clock.t, 100)).toMatchObject({ contents: 0 });
      await commitStep(store, { sessionKey: K, request: { id: "r1", status: "running" } });
      expect(await store.files.expire(clock.t - DAY, clock.t, 100)).toMatchObject({ contents: 0 });
      await commitStep(store, { sessionKey: K, request: { id: "r1", status: "done" } });
      expect(await store.files.expire(clock.t - DAY, clock.t, 100)).toMatchObject({ contents: 1 });
    });

    it("keeps a conversation's files while a reply of it waits in the outbox, not another conversation's", async () => {
      const { store, clock } = ctx;
      await received("r1", [file("f1", "to send back")]);
      await received("r2", [file("f2", "elsewhere")], { key: "telegram:7" });
      await commitStep(store, { sessionKey: K, outbound: [outbound("o1")] });
      clock.advance(2 * DAY);
      expect(await store.files.expire(clock.t - DAY, clock.t, 100)).toMatchObject({ contents: 1, bytes: "elsewhere".length });
      expect(await store.files.get("f1")).toMatchObject({ expiredAt: null });
      await store.outbox.markDelivered("o1");
      expect(await store.files.expire(clock.t - DAY, clock.t, 100)).toMatchObject({ contents: 1, bytes: "to send back".length });
    });

    it("still exports an expired file, with when it expired and no content", async () => {
      const { store, clock } = ctx;
      await received("r1", [file("f1", "old")]);
      clock.advance(2 * DAY);
      await received("r2", [file("f2", "new")]);
      await store.files.expire(clock.t - DAY, clock.t, 100);
      const exported = (await store.userData.export(ALICE)).sessions.find((s) => s.sessionKey === K)!.files;
      expect(exported.map((f) => [f.id, f.expiredAt, Buffer.from(f.contentBase64, "base64").toString()])).toEqual([
        ["f1", clock.t, ""],
        ["f2", null, "new"],
      ]);
    });

    it("deletes at most `limit` contents a pass, the oldest first", async () => {
      const { store, clock } = ctx;
      await received("r1", [file("f1", "first")]);
      clock.advance(10);
      await received("r2", [file("f2", "second"), file("f3", "third")]);
      clock.advance(2 * DAY);
      expect(await store.files.expire(clock.t - DAY, clock.t, 1)).toMatchObject({ contents: 1, bytes: "first".length });
      expect(await store.files.get("f1")).toMatchObject({ expiredAt: clock.t });
      expect(await store.files.get("f2")).toMatchObject({ expiredAt: null });
      expect(await store.files.expire(clock.t - DAY, clock.t, 5)).toMatchObject({ contents: 2 });
    });
  });
}
