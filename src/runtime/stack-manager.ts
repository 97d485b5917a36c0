import type { Store } from "../store/store.js";
import { AgentStack } from "./frame.js";
import type { ChatMessage } from "../llm/types.js";
import { lastContextTokens, rebuildHistory } from "./history.js";
import { memoryToolUses, privateTo } from "./memory/private-results.js";

/** The main agent's history between tasks, with the API's count for its last call (see compaction.ts). */
export interface MainHistory {
  history: ChatMessage[];
  contextTokens: number;
}

/**
 * The agent stacks, keyed by session key. The store is the truth; this caches what it loaded, so a
 * stack interrupted by a restart is rebuilt lazily, on its session's next request. A session nobody works on
 * (its worker let the lease go: `rest`) keeps its stack cached only among the `cacheSize` most recently active;
 * the same bound holds for the main agents' histories kept between tasks.
 */
export class AgentStackManager {
  private readonly stacks = new Map<string, AgentStack>();
  /** The main agent's history of recently active sessions, so a new task does not re-read the log. */
  private readonly mainHistories = new Map<string, MainHistory>();
  /** Which main agent session each cached history belongs to, by session key (to forget a session whole). */
  private readonly mainOf = new Map<string, string>();
  /** Sessions whose log this process has checked for batch runs a dead process left open (see firstTask). */
  private readonly checked = new Set<string>();

  /** Sessions at rest whose stack is still cached, least recently active first. */
  private readonly resting = new Set<string>();

  constructor(
    private readonly store: Pick<Store, "steps" | "tasks">,
    private readonly cacheSize = 1024,
  ) {}

  /** Nobody works on `key` now: its stack may be dropped from memory when more recent sessions need the room. */
  rest(sessionKey: string): void {
    if (!this.stacks.has(sessionKey)) return;
    this.resting.delete(sessionKey);
    this.resting.add(sessionKey);
    while (this.resting.size > this.cacheSize) {
      const oldest = this.resting.keys().next().value!;
      this.resting.delete(oldest);
      this.stacks.delete(oldest);
    }
  }

  /**
   * The main agent's history for a new task: from the cache when this process already has it, else the log.
   * `take` hands the cached copy over to the task; a look (for /context) leaves it cached.
   */
  async mainHistory(sessionKey: string, mainAgentSessionId: string, take = true): Promise<MainHistory> {
    const cached = this.mainHistories.get(mainAgentSessionId);
    if (cached) {
      if (take) this.mainHistories.delete(mainAgentSessionId);
      return take ? cached : { ...cached, history: [...cached.history] };
    }
    const rows = await this.store.steps.history(sessionKey, mainAgentSessionId);
    return { history: rebuildHistory(rows), contextTokens: lastContextTokens(rows) };
  }

  /** Keeps a finished task's main history for the session's next task (least recently used are dropped). */
  keepMainHistory(sessionKey: string, mainAgentSessionId: string, main: MainHistory): void {
    this.mainHistories.delete(mainAgentSessionId);
    this.mainHistories.set(mainAgentSessionId, main);
    this.mainOf.delete(sessionKey);
    this.mainOf.set(sessionKey, mainAgentSessionId);
    if (this.mainHistories.size > this.cacheSize) this.mainHistories.delete(this.mainHistories.keys().next().value!);
    if (this.mainOf.size > this.cacheSize) this.mainOf.delete(this.mainOf.keys().next().value!);
  }

  /**
   * True the first time a task starts in `sessionKey` since this process started (or since another replica had
   * the session): the moment to close the batch runs a dead process left open in its log. Batch runs live only in
   * the memory of the process that ran them, so none of those can still be running here.
   */
  firstTask(sessionKey: string): boolean {
    if (this.checked.has(sessionKey)) return false;
    this.checked.add(sessionKey);
    return true;
  }

  async getOrLoad(sessionKey: string): Promise<AgentStack> {
    this.resting.delete(sessionKey);
    const cached = this.stacks.get(sessionKey);
    if (cached) return cached;
    const frames = [];
    for (const record of await this.store.steps.frames(sessionKey)) {
      let history = rebuildHistory(await this.store.steps.history(sessionKey, record.agentSessionId));
      // Main's history holds earlier tasks too: as the running task's owner may see it (memory/private-results.ts).
      if (record.agentType === "main" && memoryToolUses(history).size > 0) {
        history = await privateTo(this.store, sessionKey, record.agentSessionId, history, (await this.store.tasks.active(sessionKey))?.ownerId ?? null);
      }
      frames.push({ ...record, history });
    }
    // Another caller may have loaded it while this one waited: the first copy wins, so there is only one.
    const stack = this.stacks.get(sessionKey) ?? new AgentStack(frames);
    this.stacks.set(sessionKey, stack);
    return stack;
  }

  /** The stack as held in memory, without loading it (for inspection). */
  cached(sessionKey: string): AgentStack | undefined {
    return this.stacks.get(sessionKey);
  }

  async hasActive(sessionKey: string): Promise<boolean> {
    return !(await this.getOrLoad(sessionKey)).isEmpty;
  }

  /** The session's task ended and its stack is empty: drop it. */
  taskEnded(sessionKey: string): void {
    this.stacks.get(sessionKey)?.clear();
    this.stacks.delete(sessionKey);
  }

  /**
   * Invalidates everything cached of a session, its stack, its main agent's history and the batch-run check:
   * another replica may have worked on it since (its lease changed hands), so only the store is right about it.
   */
  invalidateAll(sessionKey: string): void {
    this.invalidate(sessionKey);
    this.checked.delete(sessionKey);
    const main = this.mainOf.get(sessionKey);
    if (main) this.mainHistories.delete(main);
    this.mainOf.delete(sessionKey);
  }

  /** The cached copy may be wrong (after a failed or aborted step, a moved conversation): the next use reloads it. */
  invalidate(sessionKey: string): void {
    const main = this.stacks.get(sessionKey)?.all()[0];
    if (main) this.mainHistories.delete(main.agentSessionId);
    this.stacks.delete(sessionKey);
    this.resting.delete(sessionKey);
  }
}
