// Contract: moveSession (a chat that changed its id, e.g. a Telegram group that became a supergroup).
import { describe, expect, it } from "vitest";
import { ALICE, frame, logEntry, newApproval, newRequest, outbound, startTask, type ContractContext } from "./fixtures.js";
import { commitStep } from "../../helpers/steps.js";

const FROM = "telegram:100";
const TO = "telegram:200";
const SUB = `${FROM}:topic:7`;
const LOOKALIKE = "telegram:1000"; // shares FROM as a string prefix, but is not under it

export function moveContract(ctx: ContractContext): void {
  describe("moveSession", () => {
    /** A conversation under FROM with a row of every kind, a sub-key under it, and a look-alike neighbour. */
    async function givenConversation() {
      const { store } = ctx;
      await startTask(store, FROM, { task: "t1", request: "r1", frames: [frame("f-main")] });
      await store.requests.insert(newRequest("r-idem", FROM, { idempotency: { key: "idem-1", fingerprint: "fp" } }));
      await commitStep(store, {
        sessionKey: FROM,
        log: [logEntry("message", { text: "hi" }, { taskId: "t1", requestId: "r1", agentSessionId: "as-f-main" })],
        outbound: [outbound("o1", { requestId: "r1" })],
        approvalsCreated: [newApproval("a1", { taskId: "t1" })],
        usage: { requestId: "r1", inputTokens: 10, outputTokens: 2, cacheReadTokens: 0, cacheWriteTokens: 0, costNanoUsd: 0 },
      });
      await store.indicators.save(FROM, "typing");
      await startTask(store, SUB, { task: "t-sub", request: "r-sub" });
      await startTask(store, LOOKALIKE, { task: "t-look", request: "r-look" });
      return { mainAgentSessionId: (await store.sessions.find(FROM))!.mainAgentSessionId };
    }

    it("moves every row of the key and of its sub-keys to the new key", async () => {
      const { store } = ctx;
      const { mainAgentSessionId } = await givenConversation();
      expect(await store.sessions.move(FROM, TO)).toEqual({ moved: 2 });

      expect(await store.sessions.find(TO)).toMatchObject({ key: TO, mainAgentSessionId });
      expect(await store.sessions.find(`${TO}:topic:7`)).not.toBeNull();
      expect((await store.requests.ofSession(TO)).map((r) => r.id)).toEqual(["r1", "r-idem"]);
      expect((await store.requests.ofSession(`${TO}:topic:7`)).map((r) => r.id)).toEqual(["r-sub"]);
      expect(await store.tasks.get("t1")).toMatchObject({ sessionKey: TO, status: "running" });
      expect((await store.tasks.active(TO))?.id).toBe("t1");
      expect(await store.tasks.activeOf(FROM, ALICE)).toBeNull();
      expect((await store.tasks.activeOf(`${TO}:topic:7`, ALICE))?.id).toBe("t-sub");
      expect((await store.steps.frames(TO)).map((f) => f.frameId)).toEqual(["f-main"]);
      expect((await store.steps.log(TO)).map((e) => e.payload)).toEqual([{ text: "hi" }]);
      expect((await store.outbox.pending(TO)).map((o) => o.id)).toEqual(["o1"]);
      expect((await store.approvals.pending(TO)).map((a) => a.id)).toEqual(["a1"]);
      expect((await store.approvals.get("a1"))?.sessionKey).toBe(TO);
      expect((await store.requests.idempotency(ALICE, "idem-1"))?.sessionKey).toBe(TO);
      expect(await store.indicators.list("telegram")).toEqual([{ sessionKey: TO, data: "typing" }]);
      expect((await store.sessions.usage(TO)).inputTokens).toBe(10);
    });

    it("leaves nothing under the old key and does not touch a look-alike key", async () => {
      const { store } = ctx;
      await givenConversation();
      await store.sessions.move(FROM, TO);
      expect(await store.sessions.find(FROM)).toBeNull();
      expect(await store.sessions.find(SUB)).toBeNull();
      expect(await store.requests.ofSession(FROM)).toEqual([]);
      expect(await store.tasks.ofSession(FROM)).toEqual([]);
      expect(await store.steps.frames(FROM)).toEqual([]);
      expect(await store.steps.log(FROM)).toEqual([]);
      expect(await store.outbox.pending(FROM)).toEqual([]);
      expect(await store.approvals.pending(FROM)).toEqual([]);
      expect((await store.requests.ofSession(LOOKALIKE)).map((r) => r.id)).toEqual(["r-look"]);
      expect((await store.tasks.active(LOOKALIKE))?.id).toBe("t-look");
    });

    it("is refused, with nothing moved, when the new key has a task under way", async () => {
      const { store } = ctx;
      await givenConversation();
      await startTask(store, TO, { task: "t-there", request: "r-there", frames: [frame("f-there")] });
      const result = await store.sessions.move(FROM, TO);
      expect(result).toHaveProperty("refused");
      expect((await store.tasks.active(FROM))?.id).toBe("t1");
      expect((await store.tasks.active(TO))?.id).toBe("t-there");
      expect((await store.steps.frames(FROM)).map((f) => f.frameId)).toEqual(["f-main"]);
      expect((await store.steps.frames(TO)).map((f) => f.frameId)).toEqual(["f-there"]);
      expect((await store.requests.ofSession(FROM)).map((r) => r.id)).toEqual(["r1", "r-idem"]);
      expect((await store.approvals.pending(FROM)).map((a) => a.id)).toEqual(["a1"]);
      expect(await store.sessions.find(SUB)).not.toBeNull();
    });

    it("is refused when a sub-key's new key has a task under way", async () => {
      const { store } = ctx;
      await givenConversation();
      await startTask(store, `${TO}:topic:7`, { task: "t-there", request: "r-there" });
      expect(await store.sessions.move(FROM, TO)).toHaveProperty("refused");
      expect((await store.tasks.active(FROM))?.id).toBe("t1");
      expect((await store.tasks.active(SUB))?.id).toBe("t-sub");
    });

    it("replaces a session the new key opened that holds no work", async () => {
      const { store } = ctx;
      const { mainAgentSessionId } = await givenConversation();
      await startTask(store, TO, { task: "t-there", request: "r-there" });
      await commitStep(store, { sessionKey: TO, task: { id: "t-there", status: "completed" }, request: { id: "r-there", status: "done" } });
      await store.indicators.save(TO, "stale");
      expect(await store.sessions.move(FROM, TO)).toEqual({ moved: 2 });
      expect((await store.sessions.find(TO))?.mainAgentSessionId).toBe(mainAgentSessionId);
      expect((await store.tasks.active(TO))?.id).toBe("t1");
      expect(await store.indicators.list("telegram")).toEqual([{ sessionKey: TO, data: "typing" }]);
    });

    it("with an idle new key whose request shares an external id, moves both conversations' requests without losing either", async () => {
      const { store } = ctx;
      await startTask(store, FROM, { task: "t1", request: "r1" }); // external id ext-r1
      await store.sessions.open(TO, () => "as-there");
      await store.requests.insert(newRequest("r-there", TO, { externalId: "ext-r1" }));
      await commitStep(store, { sessionKey: TO, request: { id: "r-there", status: "done" } });
      expect(await store.sessions.move(FROM, TO)).toEqual({ moved: 1 });
      expect((await store.requests.ofSession(TO)).map((r) => r.id).sort()).toEqual(["r-there", "r1"]);
      expect(await store.requests.ofSession(FROM)).toEqual([]);
    });
  });
}
