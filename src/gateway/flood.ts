// Flood control at the door (USER_MESSAGES_PER_MINUTE): a token bucket per user, whatever the chat, so in a group
// each member has their own. A message over the limit is refused before it is stored or reaches a model; the sender
// is told once, and then nothing more is said until their bucket is full again. Buckets live in this process: with
// several replicas each keeps its own (docs/admin/operations.md).
/** How many users' buckets are kept before the full ones (nothing to remember) are forgotten. */
const KEEP = 10_000;

export type Flooded = { retryAfterMs: number; notice: string; quiet: boolean };

interface Bucket {
  tokens: number;
  at: number;
  /** The sender was told since their bucket was last full. */
  told: boolean;
}

export class FloodControl {
  private readonly buckets = new Map<string, Bucket>();

  /** `perMinute` messages in a burst, then one every 60/perMinute s. */
  constructor(
    readonly perMinute: number,
    private readonly now: () => number,
  ) {}

  /** Takes a message's place in `userId`'s bucket: null when it may pass, else how long until one may. */
  take(userId: string): Flooded | null {
    const now = this.now();
    const bucket = this.refilled(userId, now);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return null;
    }
    const retryAfterMs = Math.ceil((1 - bucket.tokens) * (60_000 / this.perMinute));
    const quiet = bucket.told;
    bucket.told = true;
    return {
      retryAfterMs,
      quiet,
      notice: `You're sending messages faster than I can take them (at most ${this.perMinute} a minute), so I'm dropping some. Wait ${Math.ceil(retryAfterMs / 1000)} s and send your message again.`,
    };
  }

  private refilled(userId: string, now: number): Bucket {
    let bucket = this.buckets.get(userId);
    if (!bucket) {
      if (this.buckets.size >= KEEP) this.forgetFull(now);
      bucket = { tokens: this.perMinute, at: now, told: false };
      this.buckets.set(userId, bucket);
      return bucket;
    }
    bucket.tokens = Math.min(this.perMinute, bucket.tokens + ((now - bucket.at) * this.perMinute) / 60_000);
    bucket.at = now;
    if (bucket.tokens >= this.perMinute) bucket.told = false;
    return bucket;
  }

  private forgetFull(now: number): void {
    for (const [user, bucket] of this.buckets) {
      if (bucket.tokens + ((now - bucket.at) * this.perMinute) / 60_000 >= this.perMinute) this.buckets.delete(user);
    }
  }
}
