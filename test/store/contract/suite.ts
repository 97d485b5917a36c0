// The Store contract: what every backend (SQLite, PostgreSQL) must do, specified through the Store interface
// only. Each backend runs it from a file of its own (test/store/contract-*.test.ts), so the backends run side by
// side; a new backend adds an entry to BACKENDS in ./backends.ts and a file that calls storeContract with its name. A
// backend that cannot run here (no PostgreSQL server) is skipped, its suite's name saying why.
import { describe, expect, it } from "vitest";
import { approvalContract } from "./approvals.js";
import { BACKENDS } from "./backends.js";
import { describeContract } from "./describe.js";
import { changeContract } from "./changes.js";
import { claimContract } from "./claims.js";
import { ALICE, frame, logEntry, newApproval, newRequest, outbound, startTask, type ContractContext } from "./fixtures.js";
import { fileContract } from "./files.js";
import { fileRetentionContract } from "./file-retention.js";
import { leaseContract } from "./leases.js";
import { moveContract } from "./move.js";
import { outboxContract } from "./outbox.js";
import { ownerContract } from "./owners.js";
import { requestContract } from "./requests.js";
import { scheduleContract } from "./schedules.js";
import { stepContract } from "./steps.js";
import { taskOptionContract } from "./task-options.js";
import { workspaceContract } from "./workspaces.js";
import { commitStep } from "../../helpers/steps.js";

/** Runs the whole contract against the backend of BACKENDS named `name`. */
export function storeContract(name: string): void {
  const backend = BACKENDS.find((b) => b.name === name);
  if (!backend) throw new Error(`no Store backend is named "${name}"; BACKENDS has ${BACKENDS.map((b) => `"${b.name}"`).join(", ")}`);
  describeContract("Store contract", backend, contract);
}

function contract(ctx: ContractContext): void {
  stepContract(ctx);
  requestContract(ctx);
  ownerContract(ctx);
  approvalContract(ctx);
  taskOptionContract(ctx);
  outboxContract(ctx);
  moveContract(ctx);
  leaseContract(ctx);
  claimContract(ctx);
  changeContract(ctx);
  fileContract(ctx);
  fileRetentionContract(ctx);
  scheduleContract(ctx);
  workspaceContract(ctx);

  describe("durability", () => {
    it("everything committed is there after the store is closed and opened again", async () => {
      const K = "telegram:100";
      let { store } = ctx;
      await startTask(store, K, { task: "t1", request: "r1", frames: [frame("f-main"), frame("f-skill", { agentType: "skill" })] });
      await store.requests.insert(newRequest("r2", K, { idempotency: { key: "idem-1", fingerprint: "fp" } }));
      await store.requests.saveIdempotentResponse(ALICE, "idem-1", "resp");
      await commitStep(store, {
        sessionKey: K,
        log: [logEntry("message", { n: 1 }, { agentSessionId: "as-f-main" })],
        task: { id: "t1", status: "waiting_approval", structuredOutput: { k: "v" } },
        usage: { requestId: "r1", inputTokens: 3, outputTokens: 4, cacheReadTokens: 5, cacheWriteTokens: 6, costNanoUsd: 7 },
        outbound: [outbound("o1", { requestId: "r1" }), outbound("o2", { requestId: "r1" })],
        approvalsCreated: [newApproval("a1"), newApproval("a2")],
      });
      await store.outbox.markDelivered("o1");
      await store.outbox.recordChunk("o1", 0, "msg-1");
      await store.approvals.decide("a2", "denied", ALICE);
      await store.indicators.save(K, "typing");

      const read = async () => ({
        session: await store.sessions.find(K),
        requests: await store.requests.ofSession(K),
        tasks: await store.tasks.ofSession(K),
        frames: await store.steps.frames(K),
        log: await store.steps.log(K),
        history: await store.steps.history(K, "as-f-main"),
        usage: await store.sessions.usage(K),
        taskUsage: await store.tasks.usage("t1"),
        pending: await store.outbox.pending(),
        sent: await store.outbox.ofRequest("r1"),
        chunks: await store.outbox.deliveredChunks("o1"),
        approvals: [await store.approvals.get("a1"), await store.approvals.get("a2")],
        idempotency: await store.requests.idempotency(ALICE, "idem-1"),
        indicators: await store.indicators.list("telegram"),
        unfinished: await store.requests.unfinished(),
      });
      const before = await read();
      ctx.clock.advance(60_000);
      store = ctx.store = await ctx.backend.reopen(store, ctx.clock.now);
      const after = await read();
      expect(after).toEqual(before);
      // Guards against comparing two empty reads.
      expect(after.frames.map((f) => f.frameId)).toEqual(["f-main", "f-skill"]);
      expect(after.pending.map((o) => o.id)).toEqual(["o2"]);
      expect(after.approvals.map((a) => a?.status)).toEqual(["pending", "denied"]);
      expect(after.idempotency?.response).toBe("resp");
    });

    it("a decision taken before a restart still wins over one after it", async () => {
      let { store } = ctx;
      await commitStep(store, { sessionKey: "telegram:100", approvalsCreated: [newApproval("a1")] });
      expect(await store.approvals.decide("a1", "approved", ALICE)).toBe(true);
      store = ctx.store = await ctx.backend.reopen(store, ctx.clock.now);
      expect(await store.approvals.decide("a1", "denied", ALICE)).toBe(false);
      expect((await store.approvals.get("a1"))?.status).toBe("approved");
    });
  });
}
