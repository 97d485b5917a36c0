// The change feed role: what a replica tells the others through the store (PostgreSQL: LISTEN/NOTIFY; SQLite: in
// the process). Hints, never the truth: whoever hears one reads the store.

/**
 * The store announces `request`, `done` and `outbound` itself when the change commits; `stack` and `delta` are
 * announced by the runtime.
 */
export type StoreChange =
  /** A request was stored (a message, a command, an approval's resume): there is work for the session. */
  | { kind: "request"; sessionKey: string; requestId: string }
  /** A request finished (done or failed). */
  | { kind: "done"; sessionKey: string; requestId: string }
  /** Replies were committed to the outbox. */
  | { kind: "outbound"; sessionKey: string; requestIds: (string | null)[] }
  /** The agent stack changed (a child took over or returned). */
  | { kind: "stack"; sessionKey: string; event: { type: "push" | "pop"; agent: string; depth: number } }
  /** A piece of a reply as the model writes it (a preview; never stored): whoever shows the chat may show it. */
  | { kind: "delta"; sessionKey: string; requestId?: string | null; event: { agent: string; depth: number; text: string } }
  /** The pieces of that agent's reply shown so far are void: its model call failed and starts over (a preview too). */
  | { kind: "reset"; sessionKey: string; requestId?: string | null; event: { agent: string; depth: number } };

export interface ChangeFeed {
  /**
   * Calls `listener` for every change any replica commits or announces (this one included). Returns unsubscribe.
   * On PostgreSQL changes arrive asynchronously, one outbound commit may arrive as several changes, and changes
   * made while the listening connection reconnects are lost: treat them as hints and read the store (the poll for
   * orphaned sessions covers what is missed).
   */
  watch(listener: (change: StoreChange) => void): () => void;
  announce(change: StoreChange): Promise<void>;
}
