import { createHash, timingSafeEqual } from "node:crypto";

const digest = (value: string) => createHash("sha256").update(value, "utf8").digest();

/**
 * Configured secret tokens (API, admin, metrics) and what each stands for. A presented token is compared with
 * every one, in constant time, whether or not an earlier one matched, so timing tells nothing; and a token such as
 * `constructor` is just a miss (no object lookup).
 */
export class TokenSet<V> {
  private readonly entries: Array<{ digest: Buffer; value: V }>;

  constructor(tokens: Iterable<[string, V]>) {
    this.entries = [...tokens].map(([token, value]) => ({ digest: digest(token), value }));
  }

  get size(): number {
    return this.entries.length;
  }

  /** What `token` stands for, or null. */
  match(token: string): V | null {
    const presented = digest(token);
    let found: V | null = null;
    for (const entry of this.entries) {
      if (timingSafeEqual(entry.digest, presented) && found === null) found = entry.value;
    }
    return found;
  }

  /** The token of an `Authorization: Bearer <token>` header, or null when the header is not one. */
  static bearer(header: string | undefined): string | null {
    return /^Bearer\s+(\S+)$/i.exec(header ?? "")?.[1] ?? null;
  }
}
