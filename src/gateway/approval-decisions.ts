import type { Logger } from "pino";
import type { Ids } from "../runtime/deps.js";
import type { ApprovalRecord, Store } from "../store/store.js";
import type { Decision, DecisionResult } from "./types.js";

export interface ApprovalDecisionsDeps {
  store: Pick<Store, "approvals" | "outbox" | "tasks">;
  ids: Ids;
  log: Logger;
  /** The gateway's clock: a decision after the task's expiry comes too late. */
  now(): number;
  /** The request that resumes a waiting turn was stored: wake the session. */
  resume(sessionKey: string): void;
}

/**
 * Decisions on pending approvals, by the owner or by the clock. Each is a compare-and-set on the stored
 * approval together with the request that resumes the turn (one transaction), so a crash never leaves a
 * decided approval without its resume and two racing decisions never both count.
 */
export class ApprovalDecisions {
  constructor(private readonly deps: ApprovalDecisionsDeps) {}

  async decide(approvalId: string, userId: string, decision: Decision): Promise<DecisionResult> {
    const { store, log } = this.deps;
    const approval = await store.approvals.get(approvalId);
    if (!approval) return { status: "not_found" };
    if (approval.ownerId !== userId) return { status: "not_owner" };
    const resume = this.resumeRequest(approval.sessionKey, approvalId, userId);
    const task = approval.taskId ? await store.tasks.get(approval.taskId) : null;
    const expiresAt = task?.expiresAt ?? null;
    if (task && expiresAt !== null && (task.status === "expired" || expiresAt <= this.deps.now())) {
      // Too late: the approval is withdrawn, and the request that would have resumed the task ends it instead.
      const withdrawn = await store.approvals.decideAndResume(approvalId, "withdrawn", "task-expired", resume);
      if (withdrawn) this.deps.resume(approval.sessionKey);
      log.info({ session: approval.sessionKey, approval: approvalId, task: task.id }, "decision after the task expired; approval withdrawn");
      return { status: "task_expired", taskId: task.id, expiresAt, requestId: withdrawn ? resume.id : null };
    }
    if (!(await store.approvals.decideAndResume(approvalId, decision === "approve" ? "approved" : "denied", userId, resume))) {
      return { status: "already_decided", decided: (await store.approvals.get(approvalId))?.status ?? "decided" };
    }
    log.info({ session: approval.sessionKey, approval: approvalId, decision }, "approval decided");
    this.deps.resume(approval.sessionKey);
    return { status: decision === "approve" ? "approved" : "denied", requestId: resume.id };
  }

  /**
   * Approvals nobody answered in time count as denied; the waiting turns resume and their owners are told.
   * Runs at startup and from a timer, so nothing here may throw: a row that fails affects only its session.
   */
  async expire(now: number): Promise<number> {
    const { store, ids, log } = this.deps;
    let expired = 0;
    let due: ApprovalRecord[];
    try {
      due = await store.approvals.due(now);
    } catch (error) {
      log.error({ err: error }, "could not read the approvals that are due; trying again at the next sweep");
      return 0;
    }
    for (const approval of due) {
      try {
        const resume = this.resumeRequest(approval.sessionKey, approval.id, approval.ownerId);
        if (!(await store.approvals.decideAndResume(approval.id, "expired", "timeout", resume))) continue;
        expired++;
        await store.outbox.enqueue(approval.sessionKey, [
          {
            id: ids.next("out"),
            requestId: null,
            taskId: approval.taskId,
            agent: "switchboard",
            depth: 0,
            text: `Nobody approved ${approval.toolName} (${approval.id}) in time, so I treated it as denied.`,
            kind: "notice",
          },
        ]);
        this.deps.resume(approval.sessionKey);
      } catch (error) {
        log.error({ err: error, session: approval.sessionKey, approval: approval.id }, "could not expire an approval; trying again at the next sweep");
      }
    }
    return expired;
  }

  /** The request that resumes a turn once its approval is decided (deduplicated per approval). */
  private resumeRequest(sessionKey: string, approvalId: string, userId: string) {
    return {
      id: this.deps.ids.next("req"),
      sessionKey,
      externalId: `approval:${approvalId}`,
      kind: "approval" as const,
      userId,
      text: `(decision on ${approvalId})`,
    };
  }
}
