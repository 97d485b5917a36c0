import { z } from "zod";
import type { TaskOptions } from "../../src/gateway/index.js";
import { HttpError } from "./request.js";

// A task's expiry and metadata as POST /v1/messages takes them, on the message that starts the task. Both come from
// the client: the metadata is checked for its shape and size without recursion (a 1 MB body can nest a value
// hundreds of thousands of levels deep), before anything serialises it.

/** The metadata's size as JSON, in UTF-8 bytes. */
export const METADATA_MAX_BYTES = 16 * 1024;
/** How deeply objects and arrays may nest inside the metadata (the metadata object itself is level 1). */
export const METADATA_MAX_DEPTH = 32;

const dateTime = z.iso.datetime({ offset: true });

/**
 * The options the body asks for; undefined when it asks for none (both absent or null). Throws a 400 naming the field,
 * or when they come with a `task_id` (they start a task). Whether the expiry is still ahead is checked apart
 * (checkExpiry), after a retry has been recognised.
 */
export function taskOptionsOf(body: { task_id?: string | undefined; expires_at?: unknown; metadata?: unknown }): TaskOptions | undefined {
  const expiresAt = expiryOf(body.expires_at);
  const metadataJson = metadataOf(body.metadata);
  if (expiresAt === null && metadataJson === null) return undefined;
  if (body.task_id !== undefined) throw invalidField("expires_at and metadata are given with a task's first message; leave out task_id to start a new task");
  return { expiresAt, metadataJson };
}

/** A new task cannot start expired: 400 when the expiry is not after `now`. */
export function checkExpiry(options: TaskOptions | undefined, now: number): void {
  if (options?.expiresAt == null || options.expiresAt > now) return;
  throw invalidField(`expires_at must be in the future: ${new Date(options.expiresAt).toISOString()} has passed (it is ${new Date(now).toISOString()} now)`);
}

function expiryOf(raw: unknown): number | null {
  if (raw === undefined || raw === null) return null;
  if (typeof raw !== "string" || !dateTime.safeParse(raw).success) {
    throw invalidField(`expires_at must be an RFC 3339 date-time with a time zone, such as "2030-01-31T17:00:00Z"; got ${describe(raw)}`);
  }
  return Date.parse(raw);
}

function metadataOf(raw: unknown): string | null {
  if (raw === undefined || raw === null) return null;
  if (typeof raw !== "object" || Array.isArray(raw)) throw invalidField(`metadata must be a JSON object; got ${describe(raw)}`);
  if (depthOver(raw, METADATA_MAX_DEPTH)) throw invalidField(`metadata nests objects or arrays more than ${METADATA_MAX_DEPTH} levels deep`);
  const json = JSON.stringify(raw);
  const bytes = Buffer.byteLength(json, "utf8");
  if (bytes > METADATA_MAX_BYTES) throw invalidField(`metadata is ${bytes} bytes as JSON; at most ${METADATA_MAX_BYTES} are allowed`);
  return json;
}

/** Whether objects and arrays nest deeper than `max` levels, walked with a queue (no recursion to overflow). */
function depthOver(root: object, max: number): boolean {
  const queue: Array<[unknown, number]> = [[root, 1]];
  for (let i = 0; i < queue.length; i++) {
    const [value, depth] = queue[i]!;
    if (value === null || typeof value !== "object") continue;
    if (depth > max) return true;
    for (const child of Object.values(value)) if (child !== null && typeof child === "object") queue.push([child, depth + 1]);
  }
  return false;
}

/** What was sent instead, briefly: its JSON type, and the start of a string. */
function describe(raw: unknown): string {
  if (typeof raw === "string") return JSON.stringify(raw.length > 40 ? `${raw.slice(0, 40)}…` : raw);
  if (Array.isArray(raw)) return "an array";
  return raw === null ? "null" : `a ${typeof raw}`;
}

function invalidField(message: string): HttpError {
  return new HttpError(400, "invalid_request_error", message);
}
