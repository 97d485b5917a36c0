import type { StoredFile } from "./files.js";
// The user data role (npm run user, the HTTP API's per-user caps): everything stored about one user identity.
import type { ApprovalRecord } from "./approvals.js";
import type { MemoryRecord } from "./memories.js";
import type { RequestRecord } from "./requests.js";
import type { LogEntry } from "./steps.js";
import type { TaskRecord } from "./tasks.js";
import type { UsageDay } from "./usage.js";

/**
 * What one user keeps on the server, for the HTTP API's per-user caps: the sessions they own, and the bytes of their
 * owned sessions' context logs (every message, reply, tool call and result: the bulk of what a session stores)
 * plus their memories.
 */
export interface UserFootprint {
  sessions: number;
  bytes: number;
}

export interface UserExport {
  userId: string;
  exportedAt: string;
  memories: MemoryRecord[];
  /** One entry per session the user owns or wrote in. */
  sessions: Array<{
    sessionKey: string;
    owned: boolean;
    requests: RequestRecord[];
    tasks: TaskRecord[];
    log: LogEntry[];
    outbound: Array<{ id: string; requestId: string | null; agent: string; text: string; kind: string; createdAt: number }>;
    /** The files of the session that are theirs, each with its bytes in base64. */
    /** Each with its bytes in base64 ("" once FILE_RETENTION_DAYS deleted them: `expiredAt` is then set). */
    files: Array<StoredFile & { contentBase64: string }>;
    /** The files of the session's workspace (sessions the user owns); a file's bytes base64, a symlink's target. */
    workspace: Array<{ path: string; kind: string; mode: number; size: number; sha256: string; contentBase64?: string; target?: string }>;
  }>;
  approvals: ApprovalRecord[];
  /** The daily quotas' counters of the user, and of the chats that are theirs alone. */
  usage: UsageDay[];
}

export interface UserDataStore {
  /**
   * Everything stored about a user: the sessions they own or wrote in, with their requests, tasks, context log and
   * outbox rows, their approvals, idempotency records and memories. Plain JSON-able data.
   */
  export(userId: string): Promise<UserExport>;
  /** Erases all of it (sessions they own entirely; their requests in others' sessions); returns counts per table. */
  erase(userId: string): Promise<Record<string, number>>;
  /** The sessions `userId` owns and the bytes stored for them (see UserFootprint); indexed by owner. */
  footprint(userId: string): Promise<UserFootprint>;
}
