import type { ApiReads, UserFootprint } from "../../src/gateway/index.js";
import { HttpError } from "./request.js";

// What one HTTP API user may cost the server: sessions they own, responses they hold open waiting for a turn (SSE
// streams and waiting JSON requests), and bytes stored for them (their sessions' context logs and their memories).
// Over a cap, a request is refused with 429 before anything is stored, its body naming the cap and its setting.

export interface UserCapLimits {
  /** HTTP_SESSIONS_PER_USER_MAX; 0: no cap. */
  sessions: number;
  /** HTTP_STREAMS_PER_USER_MAX (per replica: a stream costs the replica that holds it); 0: no cap. */
  streams: number;
  /** HTTP_STORED_BYTES_PER_USER_MAX; 0: no cap. */
  storedBytes: number;
}

type Cap = { name: "sessions_per_user" | "streams_per_user" | "stored_bytes_per_user"; setting: string; max: number };

const CAPS = {
  sessions: { name: "sessions_per_user", setting: "HTTP_SESSIONS_PER_USER_MAX" },
  streams: { name: "streams_per_user", setting: "HTTP_STREAMS_PER_USER_MAX" },
  storedBytes: { name: "stored_bytes_per_user", setting: "HTTP_STORED_BYTES_PER_USER_MAX" },
} as const;

/** How long a user's stored bytes, once read, are trusted (plus what this replica admitted since). */
const FOOTPRINT_TTL_MS = 10_000;

function refused(cap: Cap, current: number, why: string): HttpError {
  return new HttpError(429, "rate_limit_error", why, { limit: { ...cap, current } });
}

/** The gateway's flood control (USER_MESSAGES_PER_MINUTE) refused the message: 429 with Retry-After, every time. */
export function floodRefusal(result: { text: string; retryAfterMs: number; perMinute: number }): HttpError {
  const seconds = Math.ceil(result.retryAfterMs / 1000);
  return new HttpError(
    429,
    "rate_limit_error",
    result.text,
    { limit: { name: "messages_per_minute", setting: "USER_MESSAGES_PER_MINUTE", max: result.perMinute }, retry_after_seconds: seconds },
    { "retry-after": String(seconds) },
  );
}

export class UserCaps {
  private readonly streams = new Map<string, number>();
  /** Each user's admissions, one at a time, so that two requests racing cannot both take the last place. */
  private readonly queues = new Map<string, Promise<unknown>>();
  private readonly footprints = new Map<string, { read: number; value: UserFootprint }>();

  constructor(
    private readonly store: ApiReads,
    private readonly limits: UserCapLimits,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Holds one of `user`'s open streams until the returned release is called; throws 429 when they hold the most
   * they may already.
   */
  openStream(user: string): () => void {
    const held = this.streams.get(user) ?? 0;
    const max = this.limits.streams;
    if (max > 0 && held >= max) {
      throw refused(
        { ...CAPS.streams, max },
        held,
        `you have ${held} responses open waiting for a turn, the most allowed (HTTP_STREAMS_PER_USER_MAX=${max}); wait for one to finish or close it`,
      );
    }
    this.streams.set(user, held + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.streams.get(user) ?? 1) - 1;
      if (left > 0) this.streams.set(user, left);
      else this.streams.delete(user);
    };
  }

  /**
   * Runs `store` (which stores the message) if `user` may add `bytes` of text, and a new session when `newSession`;
   * throws 429 otherwise. One admission per user at a time on this replica.
   */
  async admit<T>(user: string, request: { newSession: boolean; bytes: number }, store: () => Promise<T>): Promise<T> {
    const { sessions, storedBytes } = this.limits;
    if (sessions === 0 && storedBytes === 0) return store();
    const previous = this.queues.get(user) ?? Promise.resolve();
    const turn = previous.then(async () => {
      const footprint = await this.footprint(user, request.newSession);
      if (request.newSession && sessions > 0 && footprint.sessions >= sessions) {
        throw refused(
          { ...CAPS.sessions, max: sessions },
          footprint.sessions,
          `you have ${footprint.sessions} sessions, the most allowed (HTTP_SESSIONS_PER_USER_MAX=${sessions}); continue one of them with its session_id, or ask the operator to raise the cap or remove old sessions`,
        );
      }
      if (storedBytes > 0 && footprint.bytes + request.bytes > storedBytes) {
        throw refused(
          { ...CAPS.storedBytes, max: storedBytes },
          footprint.bytes,
          `${footprint.bytes} bytes are stored for you and this message would take that over the cap (HTTP_STORED_BYTES_PER_USER_MAX=${storedBytes}); forget memories (DELETE /v1/memories) or ask the operator to raise the cap or remove old sessions`,
        );
      }
      const result = await store();
      // Until the next read: a new session is always counted by reading again (above), so only bytes add up here.
      footprint.bytes += request.bytes;
      return result;
    });
    const settled = turn.catch(() => undefined);
    this.queues.set(user, settled);
    void settled.then(() => {
      if (this.queues.get(user) === settled) this.queues.delete(user);
    });
    return turn;
  }

  /** The user's footprint: read again for a new session (so the session cap is exact here) or once it is old. */
  private async footprint(user: string, fresh: boolean): Promise<UserFootprint> {
    const known = this.footprints.get(user);
    if (known && !fresh && this.now() - known.read < FOOTPRINT_TTL_MS) return known.value;
    const value = await this.store.footprint(user);
    this.footprints.set(user, { read: this.now(), value });
    // Bounded: the users seen in the last TTL matter; the rest are read again when they come back.
    if (this.footprints.size > 10_000) {
      for (const [id, f] of this.footprints) if (this.now() - f.read >= FOOTPRINT_TTL_MS) this.footprints.delete(id);
    }
    return value;
  }
}
