import type { Lease, LeaseRecord } from "../store.js";

/**
 * Session leases kept in the process's memory, for a SQLite file the gateway holds exclusively (the process lock): no other
 * process can take a lease on it, and a restarted process is a new holder that finds every lease of the dead one
 * gone, so nothing needs to reach the disk. Same rules as the leases table (the Store contract runs on both):
 * the token grows by one each time a different holder takes a key, and a released lease keeps its token.
 * Saves two writes per message (take and give back).
 */
export class ProcessLeases {
  private readonly leases = new Map<string, LeaseRecord>();

  acquire(key: string, holder: string, ttlMs: number, now: number): Lease | null {
    const current = this.leases.get(key);
    if (current && current.holder !== holder && current.expiresAt > now) return null;
    const token = !current ? 1 : current.holder === holder ? current.token : current.token + 1;
    const lease = { key, holder, token, expiresAt: now + ttlMs };
    this.leases.set(key, lease);
    return { ...lease } as Lease;
  }

  renew(key: string, holder: string, token: number, expiresAt: number): boolean {
    const current = this.leases.get(key);
    if (!current || current.holder !== holder || current.token !== token) return false;
    current.expiresAt = expiresAt;
    return true;
  }

  release(key: string, holder: string, token: number): void {
    const current = this.leases.get(key);
    if (current && current.holder === holder && current.token === token) current.expiresAt = 0;
  }

  get(key: string): LeaseRecord | null {
    const current = this.leases.get(key);
    return current ? { ...current } : null;
  }
}
