// The change feed's wire format. Any role that can connect to the database may LISTEN and NOTIFY on any channel,
// and no privilege can stop it: so a notification carries only the id of a row in `change_feed`, a table only the
// application's role can read or write, and the change itself (session key, request ids, a reply's streamed text)
// is read from there. A forged notification names a row that does not exist, or one already delivered: nothing.
import { z } from "zod";
import type { StoreChange } from "../store.js";

export const CHANNEL = "switchboard_changes";

/** How long a change can be read after it was written; it is deleted after twice that. */
export const FEED_WINDOW_SECONDS = 60;

const changeSchema = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("request"), sessionKey: z.string(), requestId: z.string() }),
  z.object({ kind: z.literal("done"), sessionKey: z.string(), requestId: z.string() }),
  z.object({ kind: z.literal("outbound"), sessionKey: z.string(), requestIds: z.array(z.string().nullable()) }),
  z.object({
    kind: z.literal("stack"),
    sessionKey: z.string(),
    event: z.object({ type: z.enum(["push", "pop"]), agent: z.string(), depth: z.number() }),
  }),
  z.object({
    kind: z.literal("delta"),
    sessionKey: z.string(),
    requestId: z.string().nullable().optional(),
    event: z.object({ agent: z.string(), depth: z.number(), text: z.string() }),
  }),
  z.object({ kind: z.literal("reset"), sessionKey: z.string(), requestId: z.string().nullable().optional(), event: z.object({ agent: z.string(), depth: z.number() }) }),
]) satisfies z.ZodType<StoreChange>;

/** A change as its `change_feed` row stores it. */
export function encodeChange(change: StoreChange): string {
  return JSON.stringify(change);
}

/** A stored change read back; null when the row does not hold one (it is never trusted blindly). */
export function decodeChange(stored: string): StoreChange | null {
  let data: unknown;
  try {
    data = JSON.parse(stored);
  } catch {
    return null;
  }
  const parsed = changeSchema.safeParse(data);
  return parsed.success ? parsed.data : null;
}

/** A change this replica wrote, as the feed statement returned it: delivered here at once (listener.ownChanges). */
export interface FeedEntry {
  /** The change_feed row id, as its notification carries it. */
  id: string;
  /** When the row was written (database clock, ms). */
  at: number;
  change: StoreChange;
}

/** The row id a notification names; null for anything else on the channel. */
export function changeId(payload: string | undefined): string | null {
  return payload !== undefined && /^[1-9][0-9]{0,17}$/.test(payload) ? payload : null;
}
