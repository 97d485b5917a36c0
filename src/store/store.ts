// The store as its consumers see it: one backend object whose fields are roles (src/store/roles/), each a small
// interface a consumer can hold alone. app.ts picks the backend (SQLite in DATA_DIR, or PostgreSQL when
// DATABASE_URL is set); nothing else knows which one runs. Every method is async, because a networked database
// cannot answer synchronously; the SQLite store answers at once underneath. docs/engineering/store.md lists who holds
// which role.
import type { ApprovalStore } from "./roles/approvals.js";
import type { ChangeFeed } from "./roles/feed.js";
import type { FileStore } from "./roles/files.js";
import type { IndicatorStore } from "./roles/indicators.js";
import type { WorkspaceStore } from "./roles/workspaces.js";
import type { LeaseStore } from "./roles/leases.js";
import type { MemoryStore } from "./roles/memories.js";
import type { OperationsStore } from "./roles/operations.js";
import type { OutboxStore } from "./roles/outbox.js";
import type { RequestStore } from "./roles/requests.js";
import type { ScheduleStore } from "./roles/schedules.js";
import type { SessionStore } from "./roles/sessions.js";
import type { StepStore } from "./roles/steps.js";
import type { TaskStore } from "./roles/tasks.js";
import type { UsageStore } from "./roles/usage.js";
import type { UserDataStore } from "./roles/user-data.js";

export * from "./roles/approvals.js";
export * from "./roles/feed.js";
export * from "./roles/files.js";
export * from "./roles/indicators.js";
export * from "./roles/workspaces.js";
export * from "./roles/leases.js";
export * from "./roles/memories.js";
export * from "./roles/operations.js";
export * from "./roles/outbox.js";
export * from "./roles/requests.js";
export * from "./roles/schedules.js";
export * from "./roles/sessions.js";
export * from "./roles/steps.js";
export * from "./roles/tasks.js";
export * from "./roles/usage.js";
export * from "./roles/user-data.js";

export interface Store {
  readonly sessions: SessionStore;
  /** The journal of turns: the only way to write a session's stack, log, tasks and requests' progress. */
  readonly steps: StepStore;
  readonly tasks: TaskStore;
  /** The inbox. */
  readonly requests: RequestStore;
  /** The delivery journal. */
  readonly outbox: OutboxStore;
  readonly approvals: ApprovalStore;
  readonly leases: LeaseStore;
  readonly feed: ChangeFeed;
  readonly memories: MemoryStore;
  readonly userData: UserDataStore;
  readonly operations: OperationsStore;
  readonly indicators: IndicatorStore;
  /** The files of conversations and their bytes. */
  readonly files: FileStore;
  /** Scheduled jobs and users' time zones. */
  readonly schedules: ScheduleStore;
  /** The daily quotas' counters, per user and per chat. */
  readonly usage: UsageStore;
  readonly workspaces: WorkspaceStore;
  /** Resolves when the database answers (a readiness probe); rejects with the reason otherwise. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** A commit under a lease another replica has since taken over: nothing was written; the turn must stop. */
export class FencedError extends Error {
  override name = "FencedError";
  constructor(
    readonly sessionKey: string,
    readonly token: number,
    readonly current: number | null,
  ) {
    super(`the lease on ${sessionKey} was taken over (fencing token ${token}, now ${current ?? "none"}); this step was not committed`);
  }
}

/** A stored row that cannot be read back; the request fails with a clear message, the gateway carries on. */
export class CorruptStateError extends Error {
  override name = "CorruptStateError";
}
