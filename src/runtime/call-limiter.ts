/** Thrown when a target already has its maximum of calls running and its wait queue is full, or waiting would deadlock. */
export class TargetBusyError extends Error {
  override name = "TargetBusyError";
}

/**
 * A held slot. Calling it gives the slot back (once; later calls do nothing). `parent` is the slot the
 * caller itself was running under, if any: a callee that calls on holds its own slot all the while.
 */
export interface Lease {
  (): void;
  readonly target: string;
  readonly parent: Lease | null;
}

interface Waiter {
  target: string;
  parent: Lease | null;
  grant(): void;
}

/**
 * At most `maxConcurrent` calls in flight per target; up to `maxQueued` more wait in order; beyond that
 * a call is refused at once. Shared by every session of the process.
 *
 * A callee holds its slot while it waits for slots of its own, so two chains can wait on each other (X
 * calls Y while Y calls X, each target at its cap): such a wait is refused at once instead of sitting in
 * the queue until a timeout. Waits that merely take long still end at the caller's deadline (`signal`).
 */
export class CallLimiter {
  private readonly holders = new Map<string, Set<Lease>>();
  private readonly waiting = new Map<string, Waiter[]>();
  // Which slot a callee runs under, found from the abort signal every tool of that callee receives.
  private readonly leases = new WeakMap<AbortSignal, Lease>();
  private idleWaiters: Array<() => void> = [];

  constructor(
    readonly maxConcurrent: number,
    readonly maxQueued: number,
  ) {}

  /**
   * Resolves with the slot once one is free; rejects with TargetBusyError when the queue is full or the
   * wait would deadlock, or with `signal.reason` if `signal` aborts first. `parent`: the caller's own slot.
   */
  acquire(target: string, signal: AbortSignal, parent: Lease | null = null): Promise<Lease> {
    if (signal.aborted) return Promise.reject(signal.reason);
    const holders = this.holders.get(target) ?? new Set<Lease>();
    this.holders.set(target, holders);
    if (holders.size < this.maxConcurrent) return Promise.resolve(this.grant(target, parent));
    const queue = this.waiting.get(target) ?? [];
    if (queue.length >= this.maxQueued) {
      return Promise.reject(new TargetBusyError(`target busy: ${holders.size} calls to ${target} are running and ${queue.length} are waiting; try again later`));
    }
    const cycle = this.deadlock(target, parent);
    if (cycle) {
      return Promise.reject(
        new TargetBusyError(
          `target busy: ${target} is taken by calls that are waiting, directly or through their own calls, for ${cycle.join(", ")}, ` +
            `which this call is running inside; waiting would deadlock. Try again later, or do this without ${target}.`,
        ),
      );
    }
    this.waiting.set(target, queue);
    return new Promise((resolve, reject) => {
      const entry: Waiter = {
        target,
        parent,
        grant: () => {
          signal.removeEventListener("abort", onAbort);
          resolve(this.grant(target, parent));
        },
      };
      const onAbort = () => {
        const at = queue.indexOf(entry);
        if (at >= 0) queue.splice(at, 1);
        this.notifyIfIdle();
        reject(signal.reason);
      };
      signal.addEventListener("abort", onAbort, { once: true });
      queue.push(entry);
    });
  }

  /** Records that everything run with `signal` runs under `lease` (calls made there name it as their parent). */
  runsUnder(signal: AbortSignal, lease: Lease): void {
    this.leases.set(signal, lease);
  }

  /** The slot a tool's caller runs under, from the tool's signal; null at the top of a chat. */
  leaseOf(signal: AbortSignal): Lease | null {
    return this.leases.get(signal) ?? null;
  }

  inFlight(target: string): number {
    return this.holders.get(target)?.size ?? 0;
  }

  queued(target: string): number {
    return this.waiting.get(target)?.length ?? 0;
  }

  /** Resolves once no slot is held and nobody waits: abandoned callees included, they hold theirs until they stop. */
  idle(): Promise<void> {
    if (this.isIdle()) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private grant(target: string, parent: Lease | null): Lease {
    let released = false;
    const lease = Object.assign(
      () => {
        if (released) return;
        released = true;
        this.holders.get(target)?.delete(lease);
        const next = this.waiting.get(target)?.shift();
        if (next) next.grant(); // the slot passes straight to the next waiter
        this.notifyIfIdle();
      },
      { target, parent },
    ) as Lease;
    this.holders.get(target)!.add(lease);
    return lease;
  }

  /**
   * The targets of the caller's own chain that every holder of `target` ends up waiting for, or null when
   * some holder can still finish. A holder is stuck when it is one of the caller's slots, or when a call
   * inside it waits for a target whose holders are all stuck; a holder met again on the way counts as
   * stuck (nothing outside that loop would free it).
   */
  private deadlock(target: string, parent: Lease | null): string[] | null {
    const ours = new Set<Lease>();
    for (let l = parent; l; l = l.parent) ours.add(l);
    if (ours.size === 0) return null; // the caller holds nothing, so nobody can be waiting for it
    const onPath = new Set<Lease>();
    const stuck = (holder: Lease): boolean => {
      if (ours.has(holder) || onPath.has(holder)) return true;
      onPath.add(holder);
      const result = this.waitersInside(holder).some((w) => allStuck(w.target));
      onPath.delete(holder);
      return result;
    };
    const allStuck = (t: string): boolean => {
      const holders = [...(this.holders.get(t) ?? [])];
      return holders.length >= this.maxConcurrent && holders.every(stuck);
    };
    return allStuck(target) ? [...new Set([...ours].map((l) => l.target))] : null;
  }

  /** Queued calls made by `holder`'s callee or by anything below it. */
  private waitersInside(holder: Lease): Waiter[] {
    const inside: Waiter[] = [];
    for (const queue of this.waiting.values()) {
      for (const w of queue) {
        for (let l = w.parent; l; l = l.parent) {
          if (l === holder) {
            inside.push(w);
            break;
          }
        }
      }
    }
    return inside;
  }

  private isIdle(): boolean {
    for (const holders of this.holders.values()) if (holders.size > 0) return false;
    for (const queue of this.waiting.values()) if (queue.length > 0) return false;
    return true;
  }

  private notifyIfIdle(): void {
    if (this.idleWaiters.length === 0 || !this.isIdle()) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const resolve of waiters) resolve();
  }
}
