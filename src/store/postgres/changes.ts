// StoreChanges as NOTIFY payloads. PostgreSQL refuses a payload of 8000 bytes or more (and the NOTIFY, with the
// transaction around it), so a change is cut to fit: an outbound change with many request ids is split into
// several notifications; anything else too long has its strings shortened (a listener looking up a shortened id
// finds nothing, which is harmless; the orphan poll catches up with what was missed).
import { z } from "zod";
import type { StoreChange } from "../store.js";

export const CHANNEL = "switchboard_changes";
/** Below PostgreSQL's 8000-byte limit, with room to spare. */
export const MAX_PAYLOAD_BYTES = 7900;

const changeSchema = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("request"), sessionKey: z.string(), requestId: z.string() }),
  z.object({ kind: z.literal("done"), sessionKey: z.string(), requestId: z.string() }),
  z.object({ kind: z.literal("outbound"), sessionKey: z.string(), requestIds: z.array(z.string().nullable()) }),
  z.object({
    kind: z.literal("stack"),
    sessionKey: z.string(),
    event: z.object({ type: z.enum(["push", "pop"]), agent: z.string(), depth: z.number() }),
  }),
  z.object({ kind: z.literal("delta"), sessionKey: z.string(), requestId: z.string().nullable().optional(), event: z.object({ agent: z.string(), depth: z.number(), text: z.string() }) }),
]) satisfies z.ZodType<StoreChange>;

const bytes = (text: string): number => Buffer.byteLength(text, "utf8");

/** One or more payloads, each under MAX_PAYLOAD_BYTES, that together carry `change`. */
export function encodeChange(change: StoreChange): string[] {
  if (change.kind !== "outbound") return [fit(change)];
  const payloads: string[] = [];
  let ids: (string | null)[] = [];
  for (const id of change.requestIds) {
    if (ids.length > 0 && bytes(JSON.stringify({ ...change, requestIds: [...ids, id] })) > MAX_PAYLOAD_BYTES) {
      payloads.push(fit({ ...change, requestIds: ids }));
      ids = [];
    }
    ids.push(id);
  }
  payloads.push(fit({ ...change, requestIds: ids }));
  return payloads;
}

/** `change` as JSON, its strings shortened (halving their cap) until it fits. */
function fit(change: StoreChange): string {
  let json = JSON.stringify(change);
  for (let cap = 4096; bytes(json) > MAX_PAYLOAD_BYTES && cap >= 1; cap = Math.floor(cap / 2)) {
    json = JSON.stringify(capStrings(change, cap));
  }
  return json;
}

function capStrings<T>(value: T, cap: number): T {
  if (typeof value === "string") return value.slice(0, cap) as T;
  if (Array.isArray(value)) return value.map((v: unknown) => capStrings(v, cap)) as T;
  if (value !== null && typeof value === "object") {
    // `kind` and the stack event's `type` are what a listener switches on: never cut.
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, k === "kind" || k === "type" ? v : capStrings(v, cap)])) as T;
  }
  return value;
}

/** A payload read from the channel; null when it is not a StoreChange (another program on the channel). */
export function decodeChange(payload: string | undefined): StoreChange | null {
  if (payload === undefined) return null;
  let data: unknown;
  try {
    data = JSON.parse(payload);
  } catch {
    return null;
  }
  const parsed = changeSchema.safeParse(data);
  return parsed.success ? parsed.data : null;
}
