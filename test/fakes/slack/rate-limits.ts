// Opt-in rate limits: past a method's budget the fake answers HTTP 429, `Retry-After: <seconds>` and
// `{ ok: false, error: "ratelimited" }`, the answer failNext({ status: 429 }) injects and @slack/web-api turns into a
// rate-limited event (and a retry, or a RateLimitedError with rejectRateLimitedCalls).
//
// Sources: docs.slack.dev/apis/web-api/rate-limits: limits apply "per API method per workspace/team per app"
// (one fake = one app in one workspace); "Tier 1 1+ per minute, Tier 2 20+, Tier 3 50+, Tier 4 100+"; a rate-limited
// call gets 429 with a Retry-After header of seconds to wait. Method tiers from the method pages (their JSON copies in
// slack-ruby/slack-api-ref and smstoslack/slack_kit): chat.update Tier 3; chat.startStream Tier 2;
// chat.appendStream Tier 4; chat.stopStream Tier 2.
//
// ASSUMPTIONS: the tier's floor ("50+") is the budget, over a rolling 60-second window; every admitted call counts,
// whatever it then answers; a call refused with 429 does not count; Retry-After is the whole seconds until the window
// has room (at least 1). `perMessagePerSecond` is NOT documented for chat.update in the stored reference (only
// chat.postMessage's "one message per second per channel" is); it is a knob for testing a bot's own throttling of
// edits to one message, off unless asked for.

import { optString, type Params } from "./common.js";

/** Docs' tier floors, calls per minute. */
export const TIER_PER_MINUTE = { 1: 1, 2: 20, 3: 50, 4: 100 } as const;

/** The documented tier of the methods whose tier the stored reference states. */
export const METHOD_TIERS: Record<string, keyof typeof TIER_PER_MINUTE> = {
  "chat.update": 3,
  "chat.startStream": 2,
  "chat.appendStream": 4,
  "chat.stopStream": 2,
};

export interface RateLimit {
  /** Admitted calls per rolling minute. Default: the method's documented tier (METHOD_TIERS). */
  perMinute?: number;
  /** Admitted calls per rolling second to one message (its `channel` + `ts`). Not documented; see above. */
  perMessagePerSecond?: number;
}

const MINUTE = 60_000;
const SECOND = 1000;

export class RateLimiter {
  private limits = new Map<string, { perMinute: number; perMessagePerSecond?: number }>();
  /** Times of admitted calls, per method and per method + message. */
  private admitted = new Map<string, number[]>();

  constructor(private readonly now: () => number) {}

  set(method: string, limit: RateLimit | null) {
    if (limit === null) {
      this.limits.delete(method);
      return;
    }
    const tier = METHOD_TIERS[method];
    const perMinute = limit.perMinute ?? (tier === undefined ? undefined : TIER_PER_MINUTE[tier]);
    if (perMinute === undefined) throw new Error(`fake Slack: no documented tier for ${method} here; pass perMinute`);
    if (perMinute < 1 || (limit.perMessagePerSecond !== undefined && limit.perMessagePerSecond < 1)) {
      throw new Error(`fake Slack: a rate limit for ${method} must allow at least 1 call`);
    }
    this.limits.set(method, { perMinute, ...(limit.perMessagePerSecond !== undefined && { perMessagePerSecond: limit.perMessagePerSecond }) });
  }

  /** Retry-After seconds if this call is over a limit; otherwise null, and the call is counted. */
  admit(method: string, params: Params): number | null {
    const limit = this.limits.get(method);
    if (!limit) return null;
    const now = this.now();
    const channel = optString(params, "channel");
    const ts = optString(params, "ts");
    const windows: Array<{ key: string; count: number; ms: number }> = [{ key: method, count: limit.perMinute, ms: MINUTE }];
    if (limit.perMessagePerSecond !== undefined && channel !== undefined && ts !== undefined) {
      windows.push({ key: `${method} ${channel}/${ts}`, count: limit.perMessagePerSecond, ms: SECOND });
    }
    let waitMs = 0;
    for (const w of windows) {
      const times = (this.admitted.get(w.key) ?? []).filter((t) => t > now - w.ms);
      this.admitted.set(w.key, times);
      // Room again once the oldest call that fills the window has left it.
      if (times.length >= w.count) waitMs = Math.max(waitMs, times[times.length - w.count]! + w.ms - now);
    }
    if (waitMs > 0) return Math.max(1, Math.ceil(waitMs / SECOND));
    for (const w of windows) this.admitted.get(w.key)!.push(now);
    return null;
  }

  reset() {
    this.limits.clear();
    this.admitted.clear();
  }
}
