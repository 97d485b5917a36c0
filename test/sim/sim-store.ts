import type { LogEntry, NewRequest, StepCommit, Store } from "../../src/store/store.js";
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
}

/**
 * The world's SQLite store, with a crash point: at commit number `crashAt` the process "dies" either just
 * before or just after the commit reaches the disk. `onCommit` lets the checkers look at every step.
 */
export class SimStore implements Store {
  private readonly inner: SqliteStore;
  private commits = 0;
  dead = false;

  constructor(
    file: string,
    now: () => number,
    private readonly crashAt: { commit: number; after: boolean } | null,
    private readonly plants: StorePlants,
    private readonly onCommit: (step: StepCommit) => void,
  ) {
    this.inner = new SqliteStore(file, now);
  }

  private alive(): SqliteStore {
    if (this.dead) throw new Crash("the process is gone");
    return this.inner;
  }

  die(): void {
    this.dead = true;
    this.inner.close();
  }

  commit(step: StepCommit): void {
    const store = this.alive();
    this.commits++;
    const crashing = this.crashAt !== null && this.commits === this.crashAt.commit;
    if (crashing && !this.crashAt!.after) {
      this.die();
      throw new Crash(`crashed before commit ${this.commits}`);
    }
    const planted: StepCommit = {
      ...step,
      ...(this.plants.dropToolResults ? { log: (step.log ?? []).filter((e, i) => e.type !== "tool_result" || i % 3 !== 0) } : {}),
      ...(this.plants.dropFrameUpdates ? { framesUpdated: [] } : {}),
    };
    store.commit(planted);
    this.onCommit(planted);
    if (crashing) {
      this.die();
      throw new Crash(`crashed after commit ${this.commits}`);
    }
  }

  session: Store["session"] = (key, id) => this.alive().session(key, id);
  insertRequest(input: NewRequest) {
    const result = this.alive().insertRequest(this.plants.forgetDuplicates ? { ...input, externalId: `${input.externalId}#${input.id}` } : input);
    return result;
  }
  findSession: Store["findSession"] = (key) => this.alive().findSession(key);
  idempotency: Store["idempotency"] = (user, key) => this.alive().idempotency(user, key);
  saveIdempotentResponse: Store["saveIdempotentResponse"] = (user, key, response) => this.alive().saveIdempotentResponse(user, key, response);
  outboundFor: Store["outboundFor"] = (id) => this.alive().outboundFor(id);
  quarantined: Store["quarantined"] = () => this.alive().quarantined();
  request: Store["request"] = (id) => this.alive().request(id);
  requests: Store["requests"] = (key) => this.alive().requests(key);
  unfinishedRequests: Store["unfinishedRequests"] = () => this.alive().unfinishedRequests();
  task: Store["task"] = (id) => this.alive().task(id);
  activeTask: Store["activeTask"] = (key) => this.alive().activeTask(key);
  tasks: Store["tasks"] = (key) => this.alive().tasks(key);
  activeTaskOf: Store["activeTaskOf"] = (prefix, owner) => this.alive().activeTaskOf(prefix, owner);
  frames: Store["frames"] = (key) => this.alive().frames(key);
  history: Store["history"] = (id) => this.alive().history(id);
  sessionLog = (key: string): LogEntry[] => this.alive().sessionLog(key);
  sessionUsage: Store["sessionUsage"] = (key) => this.alive().sessionUsage(key);
  taskUsage: Store["taskUsage"] = (id) => this.alive().taskUsage(id);
  openAgentSessions: Store["openAgentSessions"] = (key) => this.alive().openAgentSessions(key);
  runningRequests: Store["runningRequests"] = (key) => this.alive().runningRequests(key);
  pendingOutbound: Store["pendingOutbound"] = (key) => this.alive().pendingOutbound(key);
  markDelivered: Store["markDelivered"] = (id) => {
    if (!this.plants.forgetDeliveries) this.alive().markDelivered(id);
  };
  markUndelivered: Store["markUndelivered"] = (id) => {
    if (!this.plants.forgetDeliveries) this.alive().markUndelivered(id);
  };
  markUndeliverable: Store["markUndeliverable"] = (id, reason) => this.alive().markUndeliverable(id, reason);
  undeliverable: Store["undeliverable"] = (key) => this.alive().undeliverable(key);
  moveSession: Store["moveSession"] = (from, to) => this.alive().moveSession(from, to);
  saveIndicator: Store["saveIndicator"] = (key, data) => this.alive().saveIndicator(key, data);
  deleteIndicator: Store["deleteIndicator"] = (key) => this.alive().deleteIndicator(key);
  indicators: Store["indicators"] = (provider) => this.alive().indicators(provider);
  deliveredChunks: Store["deliveredChunks"] = (id) => this.alive().deliveredChunks(id);
  recordChunk: Store["recordChunk"] = (id, chunk, platformId) => {
    if (!this.plants.forgetDeliveries) this.alive().recordChunk(id, chunk, platformId);
  };
  approvalFor: Store["approvalFor"] = (id) => this.alive().approvalFor(id);
  approval: Store["approval"] = (id) => this.alive().approval(id);
  pendingApprovals: Store["pendingApprovals"] = (key) => this.alive().pendingApprovals(key);
  decideApproval: Store["decideApproval"] = (id, status, by) => this.alive().decideApproval(id, status, by);
  decideApprovalAndResume: Store["decideApprovalAndResume"] = (id, status, by, resume) => this.alive().decideApprovalAndResume(id, status, by, resume);
  dueApprovals: Store["dueApprovals"] = (now) => this.alive().dueApprovals(now);
  close(): void {
    if (!this.dead) this.inner.close();
  }
}
