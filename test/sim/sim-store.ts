import type { LogEntryInput, NewRequest, StepCommit, Store } from "../../src/store/store.js";
import { SqliteStore } from "../../src/store/sqlite/sqlite-store.js";

/** The process died: every later use of its store fails, like calls into a dead process. */
export class Crash extends Error {
  override name = "Crash";
}

/** Bugs the checkers must catch, planted in the store a world uses. */
export interface StorePlants {
  dropToolResults?: boolean;
  dropFrameUpdates?: boolean;
  forgetDuplicates?: boolean;
  forgetDeliveries?: boolean;
  /** Acknowledges an inbound message at once and commits it with the next group (the bug group commit must not have). */
  ackBeforeCommit?: boolean;
  /** Commits a step's tool_result rows with the session's next step (a step torn in two, as a shared journal did). */
  lateToolResults?: boolean;
}

/**
 * Where the process dies: at step commit number `commit`, just before or just after it reaches the disk; or at
 * the `groupCommit`th group commit of several writes (steps, inbound messages, delivery marks, leases of any
 * session), after that transaction committed and before any of its writers was told (nobody is acknowledged),
 * or (`before`) just before it, so that all of its writes are lost; or (`afterRunningTool`) just before the
 * commit that follows the first step marking a tool as running (the tool ran; its result is lost).
 */
export type CrashPoint = { commit: number; after: boolean } | { groupCommit: number; before?: boolean } | { afterRunningTool: true };

/**
 * The world's SQLite store, with a crash point (CrashPoint). `onCommit` lets the checkers look at every step; the commit
 * resolves only once they have, so the turn that made the step waits for them.
 *
 * Every method is async, so a call into a dead process rejects (as a networked store's would) rather than
 * throwing where the caller does not expect it (a lease renewal on a timer).
 */
export class SimStore implements Store {
  private readonly inner: SqliteStore;
  private commits = 0;
  private groups = 0;
  /** The crash struck a group commit of this many writes (just before it or just after it; none acknowledged). */
  crashedGroup = 0;
  /** That group had committed: its writes are on disk although their writers were never told. */
  private groupOnDisk = false;
  /** afterRunningTool: a tool was marked running; the next commit dies. */
  private toolRunning = false;
  /** lateToolResults: the tool results held back per session, for its next commit. */
  private readonly heldResults = new Map<string, LogEntryInput[]>();
  /** forgetDeliveries: replies this process handed out; kept in memory only, so a restart sends them again. */
  private readonly claimedHere = new Set<string>();
  dead = false;

  constructor(
    file: string,
    now: () => number,
    private readonly crashAt: CrashPoint | null,
    private readonly plants: StorePlants,
    private readonly onCommit: (step: StepCommit) => Promise<void>,
  ) {
    // Exclusive, like the gateway's own store: the file is this process's, so the leases the previous
    // (crashed) process left in it are expired at once and the restart resumes its sessions.
    const group = crashAt && "groupCommit" in crashAt ? crashAt : null;
    const strike = (writes: number, before: boolean) => {
      if (group === null || Boolean(group.before) !== before || writes < 2 || ++this.groups !== group.groupCommit) return;
      this.crashedGroup = writes;
      this.groupOnDisk = !before;
      this.die();
      throw new Crash(`crashed ${before ? "before" : "after"} group commit ${this.groups} (${writes} writes ${before ? "lost" : "on disk"}, none acknowledged)`);
    };
    this.inner = new SqliteStore(file, now, { exclusive: true, groupCommit: { before: (n) => strike(n, true), after: (n) => strike(n, false) } });
  }

  private alive(): SqliteStore {
    if (this.dead) throw new Crash("the process is gone");
    return this.inner;
  }

  die(): void {
    this.dead = true;
    void this.inner.close();
  }

  async commit(step: StepCommit): Promise<void> {
    // One commit at a time, each with its checks (SQLite has a single writer anyway): the checkers see the
    // state a step left, before any other step lands.
    const turn = this.committing.then(() => this.commitNow(step));
    this.committing = turn.catch(() => {});
    return turn;
  }

  private committing: Promise<void> = Promise.resolve();

  private async commitNow(step: StepCommit): Promise<void> {
    const store = this.alive();
    this.commits++;
    const at = this.crashAt && "commit" in this.crashAt ? this.crashAt : null;
    const crashing = (at !== null && this.commits === at.commit) || this.toolRunning;
    if (this.crashAt !== null && "afterRunningTool" in this.crashAt && (step.framesUpdated ?? []).some((f) => f.runningToolUseId)) this.toolRunning = true;
    if (crashing && (at === null || !at.after)) {
      this.die();
      throw new Crash(`crashed before commit ${this.commits}`);
    }
    const planted: StepCommit = {
      ...step,
      ...(this.plants.dropToolResults ? { log: (step.log ?? []).filter((e, i) => e.type !== "tool_result" || i % 3 !== 0) } : {}),
      ...(this.plants.lateToolResults ? { log: this.holdResults(step) } : {}),
      ...(this.plants.dropFrameUpdates ? { framesUpdated: [] } : {}),
    };
    try {
      await store.commit(planted);
    } catch (error) {
      // The process died after the group holding this step committed: the step is on disk, so the checkers
      // must know it (they read what they can before the dead store refuses them).
      if (error instanceof Crash && this.groupOnDisk) await this.onCommit(planted).catch(() => {});
      throw error;
    }
    await this.onCommit(planted);
    if (crashing) {
      this.die();
      throw new Crash(`crashed after commit ${this.commits}`);
    }
  }

  private holdResults(step: StepCommit): LogEntryInput[] {
    const held = this.heldResults.get(step.sessionKey) ?? [];
    const rows = step.log ?? [];
    this.heldResults.set(step.sessionKey, rows.filter((e) => e.type === "tool_result"));
    return [...held, ...rows.filter((e) => e.type !== "tool_result")];
  }

  session: Store["session"] = async (key, id) => this.alive().session(key, id);
  insertRequest: Store["insertRequest"] = async (input: NewRequest) => {
    const store = this.alive();
    if (this.plants.ackBeforeCommit) {
      void store.insertRequest(input).catch(() => {});
      const { claimSession: _claim, idempotency: _key, taskOptions, ...fields } = input;
      const zero = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, costUsd: 0, taskOptions: taskOptions ?? null };
      return { status: "inserted", request: { ...fields, status: "pending", taskId: null, error: null, ...zero, createdAt: 0, updatedAt: 0 } };
    }
    return store.insertRequest(this.plants.forgetDuplicates ? { ...input, externalId: `${input.externalId}#${input.id}` } : input);
  };
  findSession: Store["findSession"] = async (key) => this.alive().findSession(key);
  idempotency: Store["idempotency"] = async (user, key) => this.alive().idempotency(user, key);
  saveIdempotentResponse: Store["saveIdempotentResponse"] = async (user, key, response) => this.alive().saveIdempotentResponse(user, key, response);
  outboundFor: Store["outboundFor"] = async (id) => this.alive().outboundFor(id);
  quarantined: Store["quarantined"] = async () => this.alive().quarantined();
  request: Store["request"] = async (id) => this.alive().request(id);
  requests: Store["requests"] = async (key) => this.alive().requests(key);
  unfinishedRequests: Store["unfinishedRequests"] = async () => this.alive().unfinishedRequests();
  unfinishedRequestsOf: Store["unfinishedRequestsOf"] = async (key) => this.alive().unfinishedRequestsOf(key);
  task: Store["task"] = async (id) => this.alive().task(id);
  activeTask: Store["activeTask"] = async (key) => this.alive().activeTask(key);
  conversationOwner: Store["conversationOwner"] = async (key) => this.alive().conversationOwner(key);
  tasks: Store["tasks"] = async (key) => this.alive().tasks(key);
  activeTaskOf: Store["activeTaskOf"] = async (prefix, owner) => this.alive().activeTaskOf(prefix, owner);
  frames: Store["frames"] = async (key) => this.alive().frames(key);
  history: Store["history"] = async (id) => this.alive().history(id);
  sessionLog: Store["sessionLog"] = async (key) => this.alive().sessionLog(key);
  sessionUsage: Store["sessionUsage"] = async (key) => this.alive().sessionUsage(key);
  taskUsage: Store["taskUsage"] = async (id) => this.alive().taskUsage(id);
  openAgentSessions: Store["openAgentSessions"] = async (key) => this.alive().openAgentSessions(key);
  runningRequests: Store["runningRequests"] = async (key) => this.alive().runningRequests(key);
  pendingOutbound: Store["pendingOutbound"] = async (key) => this.alive().pendingOutbound(key);
  markDelivered: Store["markDelivered"] = async (id) => {
    const store = this.alive();
    if (!this.plants.forgetDeliveries) await store.markDelivered(id);
  };
  markUndelivered: Store["markUndelivered"] = async (id) => {
    const store = this.alive();
    if (this.plants.forgetDeliveries) this.claimedHere.delete(id);
    else await store.markUndelivered(id);
  };
  /**
   * With forgetDeliveries the claim is never written down: this process does not hand a reply out twice, but
   * after a restart every reply it sent is pending again.
   */
  claimNextOutbound: Store["claimNextOutbound"] = async (key) => {
    const store = this.alive();
    if (!this.plants.forgetDeliveries) return store.claimNextOutbound(key);
    const next = (await store.pendingOutbound(key)).find((o) => !this.claimedHere.has(o.id)) ?? null;
    if (next) this.claimedHere.add(next.id);
    return next;
  };
  markUndeliverable: Store["markUndeliverable"] = async (id, reason) => this.alive().markUndeliverable(id, reason);
  undeliverable: Store["undeliverable"] = async (key) => this.alive().undeliverable(key);
  moveSession: Store["moveSession"] = async (from, to) => this.alive().moveSession(from, to);
  saveIndicator: Store["saveIndicator"] = async (key, data) => this.alive().saveIndicator(key, data);
  deleteIndicator: Store["deleteIndicator"] = async (key) => this.alive().deleteIndicator(key);
  indicators: Store["indicators"] = async (provider) => this.alive().indicators(provider);
  deliveredChunks: Store["deliveredChunks"] = async (id) => this.alive().deliveredChunks(id);
  recordChunk: Store["recordChunk"] = async (id, chunk, platformId) => {
    const store = this.alive();
    if (!this.plants.forgetDeliveries) await store.recordChunk(id, chunk, platformId);
  };
  approvalFor: Store["approvalFor"] = async (call, scope) => this.alive().approvalFor(call, scope);
  approval: Store["approval"] = async (id) => this.alive().approval(id);
  pendingApprovals: Store["pendingApprovals"] = async (key) => this.alive().pendingApprovals(key);
  decideApproval: Store["decideApproval"] = async (id, status, by) => this.alive().decideApproval(id, status, by);
  decideApprovalAndResume: Store["decideApprovalAndResume"] = async (id, status, by, resume) => this.alive().decideApprovalAndResume(id, status, by, resume);
  dueApprovals: Store["dueApprovals"] = async (now) => this.alive().dueApprovals(now);
  acquireLease: Store["acquireLease"] = async (key, holder, ttlMs) => this.alive().acquireLease(key, holder, ttlMs);
  renewLease: Store["renewLease"] = async (key, holder, token, ttlMs) => this.alive().renewLease(key, holder, token, ttlMs);
  releaseLease: Store["releaseLease"] = async (key, holder, token) => this.alive().releaseLease(key, holder, token);
  lease: Store["lease"] = async (key) => this.alive().lease(key);
  orphanedSessions: Store["orphanedSessions"] = async () => this.alive().orphanedSessions();
  // The change feed is the process's own: a dead process hears nothing more (closing the inner store drops it).
  watch: Store["watch"] = (listener) => this.inner.watch(listener);
  announce: Store["announce"] = async (change) => this.alive().announce(change);
  ping: Store["ping"] = async () => this.alive().ping();
  memories: Store["memories"] = async (user) => this.alive().memories(user);
  searchMemories: Store["searchMemories"] = async (user, query, limit) => this.alive().searchMemories(user, query, limit);
  saveMemories: Store["saveMemories"] = async (user, changes) => this.alive().saveMemories(user, changes);
  deleteMemories: Store["deleteMemories"] = async (user, ids) => this.alive().deleteMemories(user, ids);
  claimMemoryJob: Store["claimMemoryJob"] = async (holder, now, claimMs, maxAttempts) => this.alive().claimMemoryJob(holder, now, claimMs, maxAttempts);
  finishMemoryJob: Store["finishMemoryJob"] = async (taskId, holder, changes) => this.alive().finishMemoryJob(taskId, holder, changes);
  retryMemoryJob: Store["retryMemoryJob"] = async (taskId, holder, error, retryAt) => this.alive().retryMemoryJob(taskId, holder, error, retryAt);
  pendingMemoryJobs: Store["pendingMemoryJobs"] = async () => this.alive().pendingMemoryJobs();
  exportUser: Store["exportUser"] = async (user) => this.alive().exportUser(user);
  deleteUser: Store["deleteUser"] = async (user) => this.alive().deleteUser(user);
  userFootprint: Store["userFootprint"] = async (user) => this.alive().userFootprint(user);
  recentSessions: Store["recentSessions"] = async (limit) => this.alive().recentSessions(limit);
  sessionSummary: Store["sessionSummary"] = async (key) => this.alive().sessionSummary(key);
  allPendingApprovals: Store["allPendingApprovals"] = async () => this.alive().allPendingApprovals();
  stuckWork: Store["stuckWork"] = async (before, limit) => this.alive().stuckWork(before, limit);
  recentErrors: Store["recentErrors"] = async (key, limit) => this.alive().recentErrors(key, limit);
  operationalCounts: Store["operationalCounts"] = async () => this.alive().operationalCounts();

  async close(): Promise<void> {
    if (!this.dead) await this.inner.close();
  }
}
