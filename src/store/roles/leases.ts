// The leases role: a replica's hold on a session key (or on a singleton job such as `@telegram-polling`), with a
// fencing token. Only `acquire` hands out a Lease, and only a Lease gives a SessionWriter (StepStore.writer).

/** A lease as it stands in the store (anyone may read it; it gives no right to write). */
export interface LeaseRecord {
  key: string;
  holder: string;
  /** The fencing token: grows by one each time a different holder takes the lease; never goes back. */
  token: number;
  expiresAt: number;
}

declare const granted: unique symbol;

/**
 * A lease this holder was granted (LeaseStore.acquire): the proof StepStore.writer asks for. Nothing else makes one,
 * so code that holds no lease has no way to write a session's state; a cast to Lease is the only way around it.
 */
export type Lease = LeaseRecord & { readonly [granted]: true };

/** What a step is written under: the holder and the token of its lease. */
export interface Fence {
  holder: string;
  token: number;
}

export interface LeaseStore {
  /**
   * Takes the lease on `key` for `holder` for `ttlMs`: granted when nobody holds it, when it expired, or when
   * `holder` holds it already (then only extended). A grant to a different holder than the last one increments
   * the fencing token. Null when another holder's lease is still live.
   */
  acquire(key: string, holder: string, ttlMs: number): Promise<Lease | null>;
  /**
   * Extends the lease if it still carries `token` (it may have expired, as long as nobody took it over: the fence,
   * too, checks only the token, so a holder whose lease ran out but was not taken over still commits).
   */
  renew(key: string, holder: string, token: number, ttlMs: number): Promise<boolean>;
  /** Gives the lease up at once (so any replica may take the session's next message): expiresAt 0, token kept. */
  release(key: string, holder: string, token: number): Promise<void>;
  get(key: string): Promise<LeaseRecord | null>;
  /**
   * Sessions with work nobody is doing: unfinished requests or undelivered replies, and no live lease. What a
   * replica polls for when a notification was missed, and what it takes over when another replica died.
   */
  orphanedSessions(): Promise<string[]>;
}
