// Shared bits of the Telegram fake: the error type every validator throws and
// lenient parameter readers. The Bot API accepts every parameter either as a
// JSON value or as a string (query string / form body), so e.g. `"42"` is a
// valid Integer and `'{"a":1}'` a valid object; the readers mirror that.

/** A Bot API error response: thrown by validators, turned into `{ ok: false, ... }` by the server. */
export class TgError extends Error {
  constructor(
    readonly code: number,
    readonly description: string,
    readonly parameters?: { retry_after?: number; migrate_to_chat_id?: number },
  ) {
    super(description);
  }
}

export const badRequest = (detail: string) => new TgError(400, `Bad Request: ${detail}`);

export interface MessageEntity {
  type: string;
  /** In UTF-16 code units, like everything Telegram says about text positions. */
  offset: number;
  length: number;
  url?: string;
  language?: string;
  custom_emoji_id?: string;
  user?: Record<string, unknown>;
}

export type Params = Record<string, unknown>;

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

const isAbsent = (v: unknown) => v === undefined || v === null || v === "";

/** An Integer parameter (number or numeric string); undefined when absent. */
export function optInt(params: Params, name: string): number | undefined {
  const v = params[name];
  if (isAbsent(v)) return undefined;
  if (typeof v === "number" && Number.isSafeInteger(v)) return v;
  if (typeof v === "string" && /^\s*-?\d+\s*$/.test(v) && Number.isSafeInteger(Number(v))) return Number(v);
  throw badRequest(`field "${name}" must be of type Integer`);
}

export function optString(params: Params, name: string): string | undefined {
  const v = params[name];
  if (v === undefined || v === null) return undefined;
  if (typeof v === "string") return v;
  if (typeof v === "number" || typeof v === "boolean") return String(v);
  throw badRequest(`field "${name}" must be of type String`);
}

export function optBool(params: Params, name: string): boolean | undefined {
  const v = params[name];
  if (isAbsent(v)) return undefined;
  if (typeof v === "boolean") return v;
  if (v === "true" || v === "1" || v === 1) return true;
  if (v === "false" || v === "0" || v === 0) return false;
  throw badRequest(`field "${name}" must be of type Boolean`);
}

/** A JSON-serialized parameter (object or array), given either as JSON or as a JSON string. */
export function optJson(params: Params, name: string, what = name): unknown {
  const v = params[name];
  if (isAbsent(v)) return undefined;
  if (typeof v !== "string") return v;
  try {
    return JSON.parse(v) as unknown;
  } catch {
    throw badRequest(`can't parse ${what} JSON object`);
  }
}

/** UTF-8 byte length of a JS (UTF-16) prefix, for error messages that quote byte offsets. */
export const byteLength = (s: string) => Buffer.byteLength(s, "utf8");

export const hasLoneSurrogate = (s: string) => /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(s);

// TDLib's sort order for entities sharing offset and length (get_type_priority): containers first.
const TYPE_PRIORITY: Record<string, number> = {
  blockquote: 0,
  expandable_blockquote: 0,
  pre: 11,
  code: 20,
  text_link: 49,
  text_mention: 49,
  bold: 90,
  italic: 91,
  underline: 92,
  strikethrough: 93,
  spoiler: 94,
  custom_emoji: 99,
};
const priority = (type: string) => TYPE_PRIORITY[type] ?? 50;

/** Telegram's entity order: by offset, longer first, then by type priority. */
export function sortEntities(entities: MessageEntity[]): MessageEntity[] {
  return entities.sort((a, b) => a.offset - b.offset || b.length - a.length || priority(a.type) - priority(b.type));
}
