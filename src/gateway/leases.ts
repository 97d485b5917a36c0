import type { Timers } from "../runtime/deps.js";
import type { Fence, SessionWriter, Store } from "../store/store.js";

export interface LeaseOptions {
  /** This process's name in the lease table: unique per start, so a restarted replica is a new holder. */
  replica: string;
  /** How long a lease lives unless renewed (SESSION_LEASE_MS). */
  ttlMs: number;
  timers: Timers;
}

export interface HeldLease {
  token: number;
  /** Writes the session's steps under this lease (each one fenced by its token). */
  writer: SessionWriter;
  /** Another holder had the session since this replica last held it: what it cached may be stale. */
  changedHands: boolean;
  /** Set when a renewal found the lease taken over: the turn must stop; its next commit would be refused. */
  lost: boolean;
}

/**
 * This replica's leases. A session's lease is held while the replica works on it and renewed every third of
 * its lifetime; its writer (the only way to write the session's state) carries the lease's fencing token, so the
 * database refuses the step of a replica that was paused past its lease and taken over.
 */
export class Leases {
  private readonly held = new Map<string, HeldLease & { renewal: unknown }>();
  /** The token this replica last held per key (bounded: only to tell whether a cached stack is still good). */
  private readonly lastToken = new Map<string, number>();

  constructor(
    private readonly store: Pick<Store, "leases" | "steps">,
    private readonly options: LeaseOptions,
  ) {}

  get replica(): string {
    return this.options.replica;
  }

  get ttlMs(): number {
    return this.options.ttlMs;
  }

  /** Takes the lease on `key`, or null when another replica holds it. `onLost` runs if it is later taken over. */
  async acquire(key: string, onLost: () => void): Promise<HeldLease | null> {
    const lease = await this.store.leases.acquire(key, this.options.replica, this.options.ttlMs);
    if (!lease) return null;
    const before = this.held.get(key);
    if (before) this.options.timers.clearTimeout(before.renewal);
    const writer = this.store.steps.writer(lease);
    const held = { token: lease.token, writer, changedHands: this.lastToken.get(key) !== lease.token, lost: false, renewal: null as unknown };
    this.lastToken.delete(key);
    this.lastToken.set(key, lease.token);
    if (this.lastToken.size > 10_000) this.lastToken.delete(this.lastToken.keys().next().value!);
    const renew = () => {
      held.renewal = this.options.timers.setTimeout(
        () => {
          this.store.leases.renew(key, this.options.replica, held.token, this.options.ttlMs).then(
            (ok) => {
              if (this.held.get(key) !== held) return;
              if (ok) return renew();
              held.lost = true;
              onLost();
            },
            // The database did not answer: keep trying; if the lease runs out meanwhile, the fence catches it.
            () => this.held.get(key) === held && renew(),
          );
        },
        Math.max(1, Math.floor(this.options.ttlMs / 3)),
      );
      (held.renewal as { unref?: () => void } | null)?.unref?.();
    };
    renew();
    this.held.set(key, held);
    return held;
  }

  /** Lets the lease go at once (any replica may take the session's next message) and stops renewing it. */
  async release(key: string): Promise<void> {
    const held = this.held.get(key);
    if (!held) return;
    this.options.timers.clearTimeout(held.renewal);
    // A lost lease stays on record, so anything still committing under it is refused (until the next acquire).
    if (held.lost) return;
    this.held.delete(key);
    await this.store.leases.release(key, this.options.replica, held.token);
  }

  /** This replica holds the lease on `key` and has not lost it. */
  holds(key: string): boolean {
    const held = this.held.get(key);
    return held !== undefined && !held.lost;
  }

  /** The fence of the lease this replica holds on `key` (lost or not); undefined when it holds none. */
  fence(key: string): Fence | undefined {
    return this.held.get(key)?.writer.fence;
  }

  /** The writer of the lease this replica holds on `key`; undefined when it holds none. */
  writer(key: string): SessionWriter | undefined {
    return this.held.get(key)?.writer;
  }
}
