import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { z } from "zod";
import type { ApiReads, GatewayFacade } from "../../src/gateway/index.js";
import type { UserCaps } from "./caps.js";
import { RequestEvents } from "./events.js";
import type { MessageFlow } from "./message-flow.js";
import { HttpError, invalid, readJson } from "./request.js";
import { json } from "./respond.js";
import { ownedTask, taskExpired } from "./tasks.js";
import { sessionIdOf } from "./views.js";

const decisionBody = z.object({ decision: z.enum(["approve", "deny"], { error: 'must be "approve" or "deny"' }) });

/** What a user does to a task through the API: cancel it (POST /v1/tasks/{id}/cancel), decide its approval (POST /v1/approvals/{id}). */
export class TaskActions {
  constructor(
    private readonly gateway: GatewayFacade,
    private readonly store: ApiReads,
    private readonly caps: UserCaps,
    /** A decision sent with Accept: text/event-stream streams the turn it resumes, as a message does. */
    private readonly flow: MessageFlow,
  ) {}

  async cancel(res: ServerResponse, taskId: string, user: string): Promise<void> {
    const task = await ownedTask(this.store, taskId, user);
    if ((await this.store.activeTask(task.sessionKey))?.id !== task.id)
      throw new HttpError(409, "conflict_error", `task ${taskId} is not running (it is ${task.status})`);
    const result = await this.gateway.submit({ sessionKey: task.sessionKey, messageId: randomUUID(), userId: user, text: "/cancel" });
    if (result.status === "accepted") await this.gateway.whenDone(result.requestId);
    json(res, 200, { task_id: taskId, status: (await this.store.task(taskId))?.status });
  }

  async decide(req: IncomingMessage, res: ServerResponse, approvalId: string, user: string): Promise<void> {
    const body = decisionBody.safeParse(await readJson(req));
    if (!body.success) throw invalid(body.error);
    const approval = await this.store.approval(approvalId);
    // With Accept: text/event-stream the decision streams the turn it resumes, like POST /v1/messages: over the
    // cap of open streams, nothing is decided.
    const streaming = (req.headers.accept ?? "").includes("text/event-stream");
    const release = streaming ? this.caps.openStream(user) : () => {};
    const events = approval ? new RequestEvents(this.store, approval.sessionKey) : null;
    try {
      const result = await this.gateway.decide(approvalId, user, body.data.decision);
      switch (result.status) {
        case "approved":
        case "denied":
          if (streaming) {
            events!.bind(result.requestId);
            return void (await this.flow.stream(res, sessionIdOf(approval!.sessionKey), result.requestId, events!));
          }
          return json(res, 200, { approval_id: approvalId, status: result.status, request_id: result.requestId });
        case "already_decided":
          throw new HttpError(409, "conflict_error", `approval ${approvalId} was already decided (${result.decided})`);
        case "task_expired": {
          const gone = taskExpired(result.taskId, result.expiresAt, result.requestId ?? randomUUID());
          return json(res, gone.status, gone.body);
        }
        case "not_owner":
          throw new HttpError(403, "permission_error", "only the task's owner can decide");
        case "not_found":
          throw new HttpError(404, "not_found_error", `no approval ${approvalId}`);
      }
    } finally {
      events?.close();
      release();
    }
  }
}
