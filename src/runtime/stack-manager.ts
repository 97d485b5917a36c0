import type { Store } from "../store/store.js";
import { AgentStack } from "./frame.js";
import { rebuildHistory } from "./history.js";

/**
 * The agent stacks, keyed by session key. The store is the truth; this caches what it loaded, so a
 * stack interrupted by a restart is rebuilt lazily, on its session's next request.
 */
export class AgentStackManager {
  private readonly stacks = new Map<string, AgentStack>();

  constructor(private readonly store: Store) {}

  getOrLoad(sessionKey: string): AgentStack {
    let stack = this.stacks.get(sessionKey);
    if (!stack) {
      const frames = this.store.frames(sessionKey).map((record) => ({
        ...record,
        history: rebuildHistory(this.store.history(record.agentSessionId)),
      }));
      stack = new AgentStack(frames);
      this.stacks.set(sessionKey, stack);
    }
    return stack;
  }

  /** The stack as held in memory, without loading it (for inspection). */
  cached(sessionKey: string): AgentStack | undefined {
    return this.stacks.get(sessionKey);
  }

  hasActive(sessionKey: string): boolean {
    return !this.getOrLoad(sessionKey).isEmpty;
  }

  clear(sessionKey: string): void {
    this.stacks.get(sessionKey)?.clear();
    this.stacks.delete(sessionKey);
  }

  /** Forgets the cached copy (after a failed or aborted step) so the next use reloads it from the store. */
  evict(sessionKey: string): void {
    this.stacks.delete(sessionKey);
  }
}
