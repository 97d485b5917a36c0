// What the HTTP API reads of the conversations (and the two things it writes itself: forgetting memories and
// keeping an idempotent request's answer), asked of the gateway by name instead of the store. Each method is one
// question the API's handlers ask; the views they build from the answers stay in providers/http.
import type { FileSource } from "../files/types.js";
import type { Store, StoreChange } from "../store/store.js";
import { storedFiles } from "./file-source.js";

export type ApiStore = Pick<Store, "ping" | "requests" | "tasks" | "sessions" | "outbox" | "approvals" | "files" | "memories" | "steps" | "usage" | "userData" | "feed">;

export class ApiReads {
  constructor(private readonly store: ApiStore) {}

  /** Whether the database answers (GET /readyz); throws when it does not. */
  ping(): Promise<void> {
    return this.store.ping();
  }

  /** Every change the store announces (any replica's), until the returned function is called. */
  watch(listener: (change: StoreChange) => void): () => void {
    return this.store.feed.watch(listener);
  }

  request(requestId: string) {
    return this.store.requests.get(requestId);
  }

  /** The session's requests, oldest first. */
  requestsOf(sessionKey: string) {
    return this.store.requests.ofSession(sessionKey);
  }

  /** What a user's Idempotency-Key was first used for, and the answer kept for it, if any. */
  idempotency(userId: string, key: string) {
    return this.store.requests.idempotency(userId, key);
  }

  /** Keeps the answer a keyed request got, so that every retry gets the same one. */
  rememberAnswer(userId: string, key: string, response: string): Promise<void> {
    return this.store.requests.saveIdempotentResponse(userId, key, response);
  }

  task(taskId: string) {
    return this.store.tasks.get(taskId);
  }

  /** The session's tasks, oldest first. */
  tasksOf(sessionKey: string) {
    return this.store.tasks.ofSession(sessionKey);
  }

  /** The session's task under way, if any. */
  activeTask(sessionKey: string) {
    return this.store.tasks.active(sessionKey);
  }

  taskUsage(taskId: string) {
    return this.store.tasks.usage(taskId);
  }

  session(sessionKey: string) {
    return this.store.sessions.find(sessionKey);
  }

  sessionUsage(sessionKey: string) {
    return this.store.sessions.usage(sessionKey);
  }

  /** A request's replies (texts and files), in order. */
  replies(requestId: string) {
    return this.store.outbox.ofRequest(requestId);
  }

  approval(approvalId: string) {
    return this.store.approvals.get(approvalId);
  }

  /** The session's approvals not yet decided. */
  pendingApprovals(sessionKey: string) {
    return this.store.approvals.pending(sessionKey);
  }

  /** A stored file's record (not its bytes), by the gateway's id. */
  file(fileId: string) {
    return this.store.files.get(fileId);
  }

  /** Where GET /v1/files/{id} finds a file and its bytes. */
  downloads(): FileSource {
    return storedFiles(this.store);
  }

  /** The session's agent stack, outermost first. */
  frames(sessionKey: string) {
    return this.store.steps.frames(sessionKey);
  }

  /** The session's context log. */
  log(sessionKey: string) {
    return this.store.steps.log(sessionKey);
  }

  /** The daily quota that refused a request, if one did. */
  quotaRefusal(requestId: string) {
    return this.store.usage.refusal(requestId);
  }

  /** What a user stores (sessions, bytes), for the per-user caps. */
  footprint(userId: string) {
    return this.store.userData.footprint(userId);
  }

  memories(userId: string) {
    return this.store.memories.list(userId);
  }

  /** Forgets the user's memories (only those `ids` when given); how many were forgotten. */
  forgetMemories(userId: string, ids?: string[]): Promise<number> {
    return this.store.memories.delete(userId, ids);
  }
}
