// The change feed of a SQLite store: the process's own (one process per file), told after each change commits.
import type { ChangeFeed, StoreChange } from "../store.js";

export class SqliteFeed implements ChangeFeed {
  private readonly watchers = new Set<(change: StoreChange) => void>();

  watch(listener: (change: StoreChange) => void): () => void {
    this.watchers.add(listener);
    return () => this.watchers.delete(listener);
  }

  async announce(change: StoreChange): Promise<void> {
    this.emit(change);
  }

  /** Tells this process's watchers; a failing watcher never fails the store. */
  emit(change: StoreChange): void {
    for (const listener of this.watchers) {
      try {
        listener(change);
      } catch {
        // a watcher's own failure is its business
      }
    }
  }

  clear(): void {
    this.watchers.clear();
  }
}
