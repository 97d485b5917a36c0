// The lease holder's cache: what a replica knows of a session while it holds (or last held) its lease, so its
// worker does not ask the database again what its own steps wrote. A session's state is written only through a
// SessionWriter, and a writer only from a lease the store granted, fenced by its token: while the token this replica
// was granted is still the session's token, nobody else wrote that state. The cache is kept per session under that
// token; a grant with another token (someone else had the session), a refused grant or renewal, a step that fails
// (fenced or not) drop it. The paths that write outside the writer are handled where they are: a move and a user's
// erasure drop what they touch here, and bump the lease token of those sessions in the database (move.ts,
// user-data.ts), so another replica's next grant comes with a new token too.
//
// What is cached, and why each stays true:
// - the session row as `open` returns it (its main agent session id changes only by a step's /reset; its owner is
//   set once, by the request that opens a private session, before any worker runs it);
// - the active task, and its owner for `conversationOwner` (tasks are written only by steps);
// - that the session has no pending approval (one is created only by a step; decisions, expiry and quarantine
//   only ever take them out of `pending`);
// - the session's requests as its worker last read them (`unfinishedOf`), for `get` by id: a request's row changes
//   only by a step (its status, task, usage). What the inbox adds is never cached: `unfinishedOf` always reads.
import type { ApprovalStore } from "./roles/approvals.js";
import type { LeaseStore } from "./roles/leases.js";
import type { RequestRecord, RequestStore } from "./roles/requests.js";
import type { SessionRecord, SessionStore } from "./roles/sessions.js";
import type { SessionWriter, StepCommit, StepStore } from "./roles/steps.js";
import { ACTIVE_TASK_STATUSES, type TaskRecord, type TaskStore } from "./roles/tasks.js";
import type { UserDataStore } from "./roles/user-data.js";
import type { Store } from "./store.js";

interface Entry {
  token: number;
  /** Granted and neither released nor refused since: reads are served and kept only then. */
  held: boolean;
  /** Bumped by every commit: a read that started before one may carry what the commit changed, and is not kept. */
  version: number;
  session?: SessionRecord;
  /** The newest active task's record; null: none; undefined: not known. */
  active?: TaskRecord | null;
  /** The newest active task's owner, known without its record (a step created the task); null: no active task. */
  activeOwner?: string | null;
  /** The newest active task's id, with activeOwner. */
  activeId?: string | null;
  noPendingApprovals?: boolean;
  /** Requests of the session as last read under the lease (its unfinished ones), until a step changes them. */
  requests: Map<string, RequestRecord>;
}

/** Entries of sessions not held any more that are kept for the next grant with the same token. */
const RESTING = 1024;

export class HolderCache {
  private readonly entries = new Map<string, Entry>();
  /** The session of each request in an entry's `requests`. */
  private readonly requestKeys = new Map<string, string>();

  /** The entry of a session this replica holds now, or undefined. */
  held(key: string): Entry | undefined {
    const entry = this.entries.get(key);
    return entry?.held ? entry : undefined;
  }

  granted(key: string, token: number): void {
    const before = this.entries.get(key);
    this.entries.delete(key);
    if (before && before.token !== token) this.forgetRequests(before);
    const entry: Entry = before?.token === token ? before : { token, held: true, version: 0, requests: new Map() };
    entry.held = true;
    this.entries.set(key, entry);
  }

  released(key: string, token: number): void {
    const entry = this.entries.get(key);
    if (entry?.token !== token) return;
    entry.held = false;
    for (const [k, e] of this.entries) {
      if (this.entries.size <= RESTING) break;
      if (!e.held) this.drop(k);
    }
  }

  drop(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.forgetRequests(entry);
    this.entries.delete(key);
  }

  /** A request of a session this replica holds, as its worker last read it. */
  request(id: string): RequestRecord | undefined {
    const key = this.requestKeys.get(id);
    return key === undefined ? undefined : this.held(key)?.requests.get(id);
  }

  keepRequests(entry: Entry, key: string, requests: RequestRecord[]): void {
    for (const r of requests) {
      entry.requests.set(r.id, r);
      this.requestKeys.set(r.id, key);
    }
  }

  private forgetRequests(entry: Entry, ids: Iterable<string> = [...entry.requests.keys()]): void {
    for (const id of ids) {
      entry.requests.delete(id);
      this.requestKeys.delete(id);
    }
  }

  /** Forgets `key` and every session below it (`<key>:…`). */
  dropUnder(key: string): void {
    for (const k of [...this.entries.keys()]) if (k === key || k.startsWith(`${key}:`)) this.drop(k);
  }

  clear(): void {
    this.entries.clear();
    this.requestKeys.clear();
  }

  /** What a committed step of the writer with `token` changed of what is cached. */
  committed(key: string, token: number, step: StepCommit): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    if (entry.token !== token) return this.drop(key);
    entry.version++;
    const changed = [step.request?.id, step.usage?.requestId, ...(step.requestsClosed ?? []).map((r) => r.id)];
    this.forgetRequests(
      entry,
      changed.filter((id) => id !== undefined),
    );
    if (step.newMainAgentSessionId && entry.session) entry.session = { ...entry.session, mainAgentSessionId: step.newMainAgentSessionId };
    if (step.approvalsCreated?.length) entry.noPendingApprovals = false;
    if (step.taskCreated) {
      // A task is created on an empty stack: it is the newest active one. Its record (timestamps) is read when asked.
      entry.active = undefined;
      entry.activeId = step.taskCreated.id;
      entry.activeOwner = step.taskCreated.ownerId;
    }
    if (step.task) {
      const same = entry.activeId === step.task.id;
      entry.active = undefined;
      // Still active, same task: its owner stands. Ended, or another task: whether another is active is read again.
      if (!same || !ACTIVE_TASK_STATUSES.includes(step.task.status)) entry.activeId = entry.activeOwner = undefined;
    }
  }

  /** Reads through `read` and keeps the answer with `keep` if the session is still held and nothing committed since. */
  async through<T>(key: string, read: () => Promise<T>, keep: (entry: Entry, value: T) => void): Promise<T> {
    const entry = this.held(key);
    const version = entry?.version;
    const value = await read();
    if (entry && entry === this.held(key) && entry.version === version) keep(entry, value);
    return value;
  }
}

/** `store` with the holder's cache in front of the reads above; everything else is the store itself. */
export function withHolderCache(store: Store, cache = new HolderCache()): Store {
  const leases: LeaseStore = extend(store.leases, {
    async acquire(key, holder, ttlMs) {
      const lease = await store.leases.acquire(key, holder, ttlMs);
      if (lease) cache.granted(key, lease.token);
      else cache.drop(key);
      return lease;
    },
    async renew(key, holder, token, ttlMs) {
      const ok = await store.leases.renew(key, holder, token, ttlMs);
      if (!ok) cache.drop(key);
      return ok;
    },
    async release(key, holder, token) {
      cache.released(key, token);
      await store.leases.release(key, holder, token);
    },
  });
  const steps: StepStore = extend(store.steps, {
    writer(lease) {
      const inner = store.steps.writer(lease);
      return {
        sessionKey: inner.sessionKey,
        fence: inner.fence,
        async commit(step) {
          try {
            await inner.commit(step);
          } catch (error) {
            // Fenced, or not known to have been written: what this replica knew of the session may be wrong now.
            cache.drop(inner.sessionKey);
            throw error;
          }
          cache.committed(inner.sessionKey, inner.fence.token, step);
        },
      } satisfies SessionWriter;
    },
  });
  const sessions: SessionStore = extend(store.sessions, {
    open(key, newMainAgentSessionId) {
      const cached = cache.held(key)?.session;
      if (cached) return Promise.resolve(cached);
      return cache.through(
        key,
        () => store.sessions.open(key, newMainAgentSessionId),
        (entry, session) => (entry.session = session),
      );
    },
    async move(from, to) {
      try {
        return await store.sessions.move(from, to);
      } finally {
        cache.dropUnder(from);
        cache.dropUnder(to);
      }
    },
  });
  const tasks: TaskStore = extend(store.tasks, {
    active(key) {
      const entry = cache.held(key);
      if (entry?.active !== undefined) return Promise.resolve(entry.active);
      return cache.through(
        key,
        () => store.tasks.active(key),
        (e, task) => {
          e.active = task;
          e.activeId = task?.id ?? null;
          e.activeOwner = task?.ownerId ?? null;
        },
      );
    },
  });
  const requests: RequestStore = extend(store.requests, {
    unfinishedOf(key) {
      return cache.through(
        key,
        () => store.requests.unfinishedOf(key),
        (entry, list) => cache.keepRequests(entry, key, list),
      );
    },
    get(id) {
      const cached = cache.request(id);
      return cached ? Promise.resolve(cached) : store.requests.get(id);
    },
    conversationOwner(key) {
      // With no active task the owner is the sender of the oldest unfinished message: the inbox, not cached.
      const owner = cache.held(key)?.activeOwner;
      return typeof owner === "string" ? Promise.resolve(owner) : store.requests.conversationOwner(key);
    },
  });
  const approvals: ApprovalStore = extend(store.approvals, {
    pending(key) {
      if (cache.held(key)?.noPendingApprovals) return Promise.resolve([]);
      return cache.through(
        key,
        () => store.approvals.pending(key),
        (entry, list) => (entry.noPendingApprovals = list.length === 0),
      );
    },
  });
  const userData: UserDataStore = extend(store.userData, {
    async erase(userId) {
      try {
        return await store.userData.erase(userId);
      } finally {
        cache.clear();
      }
    },
  });
  return {
    sessions,
    steps,
    tasks,
    requests,
    outbox: store.outbox,
    approvals,
    leases,
    feed: store.feed,
    memories: store.memories,
    userData,
    operations: store.operations,
    indicators: store.indicators,
    files: store.files,
    schedules: store.schedules,
    usage: store.usage,
    workspaces: store.workspaces,
    ping: () => store.ping(),
    close: () => store.close(),
  };
}

/** `role` with some of its methods replaced; the others are its own, bound to it. */
function extend<T extends object>(role: T, overrides: Partial<T>): T {
  const bound = new Map<PropertyKey, unknown>();
  return new Proxy(role, {
    get(target, prop) {
      if (Object.hasOwn(overrides, prop)) return overrides[prop as keyof T];
      const value: unknown = Reflect.get(target, prop, target);
      if (typeof value !== "function") return value;
      let fn = bound.get(prop);
      if (!fn) bound.set(prop, (fn = value.bind(target)));
      return fn;
    },
  });
}
