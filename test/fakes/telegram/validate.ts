// Validation of the parts of a Bot API request where Telegram is strict:
// message text + entities, bot commands, inline keyboards, reactions, chat
// actions. Rules and wording follow the Bot API server / TDLib
// (td/telegram/MessageEntity.cpp: fix_formatted_text and friends), so a bot
// that breaks them fails here the way it would fail in production.

import { parseHtml } from "./html.js";
import { badRequest, byteLength, hasLoneSurrogate, isRecord, optJson, optString, sortEntities, TgError, type MessageEntity, type Params } from "./common.js";

export const MAX_MESSAGE_LENGTH = 4096;

const ENTITY_TYPES = new Set([
  "mention",
  "hashtag",
  "cashtag",
  "bot_command",
  "url",
  "email",
  "phone_number",
  "bold",
  "italic",
  "underline",
  "strikethrough",
  "spoiler",
  "blockquote",
  "expandable_blockquote",
  "code",
  "pre",
  "text_link",
  "text_mention",
  "custom_emoji",
]);

/** Entities that carry data beyond formatting; TDLib keeps them even when they only cover whitespace. */
const HIDDEN_DATA_ENTITIES = new Set(["text_link", "text_mention", "custom_emoji"]);

const entitiesError = (detail: string) => badRequest(`can't parse entities: ${detail}`);

const isHigh = (code: number | undefined) => code !== undefined && code >= 0xd800 && code <= 0xdbff;
/** True if UTF-16 position `pos` of `text` falls between the two halves of a surrogate pair. */
const splitsPair = (text: string, pos: number) => pos > 0 && pos < text.length && isHigh(text.charCodeAt(pos - 1)) && !isHigh(text.charCodeAt(pos));

/** Reads and checks the explicit `entities` parameter against the raw text it refers to. */
export function readEntities(raw: unknown, text: string): MessageEntity[] {
  if (raw === undefined) return [];
  if (!Array.isArray(raw)) throw entitiesError("expected an Array of MessageEntity");
  const result: MessageEntity[] = [];
  raw.forEach((value: unknown, index) => {
    if (!isRecord(value)) throw entitiesError(`entity #${index} must be an Object`);
    const { type, offset, length } = value;
    if (typeof type !== "string" || !ENTITY_TYPES.has(type)) throw entitiesError(`unsupported entity type ${JSON.stringify(type)} (entity #${index})`);
    if (typeof offset !== "number" || !Number.isInteger(offset)) throw entitiesError(`field "offset" of entity #${index} must be an Integer`);
    if (typeof length !== "number" || !Number.isInteger(length)) throw entitiesError(`field "length" of entity #${index} must be an Integer`);
    if (offset < 0) throw entitiesError(`Receive an entity with incorrect offset ${offset}`);
    if (length < 0) throw entitiesError(`Receive an entity with incorrect length ${length}`);
    // TDLib silently drops empty entities rather than rejecting them.
    if (length === 0) return;
    const end = offset + length;
    if (offset > text.length) throw entitiesError(`Entity begins after the end of the text at UTF-16 offset ${offset}`);
    if (end > text.length) throw entitiesError(`Entity beginning at UTF-16 offset ${offset} ends after the end of the text at UTF-16 offset ${end}`);
    if (splitsPair(text, offset)) throw entitiesError(`Entity begins in a middle of a UTF-16 symbol at byte offset ${byteLength(text.slice(0, offset + 1))}`);
    if (splitsPair(text, end)) {
      throw entitiesError(`Entity beginning at UTF-16 offset ${offset} ends in a middle of a UTF-16 symbol at byte offset ${byteLength(text.slice(0, end + 1))}`);
    }

    const entity: MessageEntity = { type, offset, length };
    const where = `${type} entity beginning at UTF-16 offset ${offset}`;
    if (type === "text_link") {
      if (typeof value.url !== "string" || !isValidUrl(value.url)) throw entitiesError(`${where} needs a valid "url"`);
      entity.url = value.url;
    } else if (type === "text_mention") {
      if (!isRecord(value.user) || typeof value.user.id !== "number") throw entitiesError(`${where} needs a "user" with an "id"`);
      entity.user = value.user;
    } else if (type === "custom_emoji") {
      if (typeof value.custom_emoji_id !== "string" || !/^[1-9][0-9]*$/.test(value.custom_emoji_id)) throw entitiesError(`${where} needs a numeric "custom_emoji_id"`);
      entity.custom_emoji_id = value.custom_emoji_id;
    } else if (type === "pre" && typeof value.language === "string" && value.language !== "") {
      entity.language = value.language;
    }
    result.push(entity);
  });
  return result;
}

function isValidUrl(url: string): boolean {
  for (const candidate of [url, `http://${url}`]) {
    try {
      new URL(candidate);
      return true;
    } catch {
      // try the next form
    }
  }
  return false;
}

/**
 * What Telegram does to text + entities before storing them (fix_formatted_text):
 * control characters become spaces, `\r` and a few invisible characters are
 * dropped, entities lose leading whitespace and disappear if they only cover
 * whitespace, and the text is trimmed of spaces/newlines at the end and (up to
 * the first entity) at the start. Throws "message text is empty" if nothing is left, unless `allowEmpty`
 * (TDLib's allow_empty, as for drafts), which returns the empty text instead.
 */
export function normalizeText(input: string, inputEntities: MessageEntity[], allowEmpty = false): { text: string; entities: MessageEntity[] } {
  // 1. Clean characters, remembering where every old UTF-16 position went.
  let text = "";
  const moved: number[] = [];
  for (let i = 0; i < input.length; i++) {
    moved.push(text.length);
    const code = input.charCodeAt(i);
    if (code === 0x0d || (code >= 0x2028 && code <= 0x202e) || code === 0x0333 || code === 0x033f || code === 0x030a) continue;
    text += code < 0x20 && code !== 0x0a ? " " : input[i];
  }
  moved.push(text.length);
  let entities = inputEntities.map((e) => {
    const offset = moved[e.offset]!;
    return { ...e, offset, length: moved[e.offset + e.length]! - offset };
  });

  // 2. Entities start at their first non-whitespace character; whitespace-only ones vanish.
  const isWs = (i: number) => text[i] === " " || text[i] === "\n";
  entities = entities.filter((e) => {
    if (HIDDEN_DATA_ENTITIES.has(e.type)) return e.length > 0;
    while (e.length > 0 && isWs(e.offset)) {
      e.offset++;
      e.length--;
    }
    return e.length > 0;
  });

  // 3. Trim.
  let last = text.length - 1;
  while (last >= 0 && isWs(last)) last--;
  if (last < 0) {
    if (allowEmpty) return { text: "", entities: [] };
    throw badRequest("message text is empty");
  }
  text = text.slice(0, last + 1);
  entities = entities.filter((e) => e.offset < text.length);
  for (const e of entities) e.length = Math.min(e.length, text.length - e.offset);

  const firstEntity = Math.min(text.length, ...entities.map((e) => e.offset));
  let first = 0;
  while (first < firstEntity && isWs(first)) first++;
  text = text.slice(first);
  for (const e of entities) e.offset -= first;

  return { text, entities: sortEntities(entities) };
}

export interface FormatOptions {
  /** Empty (or all-whitespace) text is valid and stays "" (sendMessageDraft: the "Thinking..." placeholder). */
  allowEmpty?: boolean;
  /** The description of the 400 for text over MAX_MESSAGE_LENGTH; default "Bad Request: message is too long". */
  tooLong?: string;
}

/**
 * The message text of sendMessage / editMessageText after parse_mode or
 * entities are applied and Telegram's clean-up ran; throws on everything
 * Telegram rejects. The 4096 limit applies to the parsed text in UTF-16 units.
 */
export function formatText(params: Params, opts: FormatOptions = {}): { text: string; entities: MessageEntity[] } {
  const source = optString(params, "text") ?? "";
  if (source === "") {
    // The Bot API server skips parse_mode for an empty text (Client::get_formatted_text), so nothing else is checked.
    if (opts.allowEmpty) return { text: "", entities: [] };
    throw badRequest("message text is empty");
  }
  if (hasLoneSurrogate(source)) throw badRequest("strings must be encoded in UTF-8");
  const mode = (optString(params, "parse_mode") ?? "").toLowerCase();
  let parsed: { text: string; entities: MessageEntity[] };
  if (mode === "html") {
    parsed = parseHtml(source);
  } else if (mode === "markdownv2" || mode === "markdown") {
    throw entitiesError(`${mode === "markdown" ? "Markdown" : "MarkdownV2"} is not supported by this fake`);
  } else if (mode === "" || mode === "none") {
    // Like the Bot API, explicit entities only count when no parse_mode is given.
    parsed = { text: source, entities: readEntities(optJson(params, "entities"), source) };
  } else {
    throw badRequest("unsupported parse_mode");
  }
  const result = normalizeText(parsed.text, parsed.entities, opts.allowEmpty);
  if (result.text.length > MAX_MESSAGE_LENGTH) throw opts.tooLong ? new TgError(400, opts.tooLong) : badRequest("message is too long");
  return result;
}

// ---- bot commands --------------------------------------------------------------

export interface BotCommand {
  command: string;
  description: string;
}

export function readCommands(params: Params): BotCommand[] {
  const raw = optJson(params, "commands", "commands");
  if (!Array.isArray(raw)) throw badRequest('field "commands" must be an Array');
  if (raw.length > 100) throw badRequest("BOT_COMMANDS_TOO_MUCH");
  return raw.map((value: unknown) => {
    if (!isRecord(value)) throw badRequest("can't parse BotCommand: expected an Object");
    const { command, description } = value;
    if (typeof command !== "string" || !/^[a-z0-9_]{1,32}$/.test(command)) throw badRequest("BOT_COMMAND_INVALID");
    if (typeof description !== "string" || description.trim() === "") throw badRequest("command description is empty");
    if (description.length > 256) throw badRequest("BOT_COMMAND_DESCRIPTION_INVALID");
    return { command, description };
  });
}

// ---- reply markup ---------------------------------------------------------------

/** Inline button fields that make a button do something; a button with none of them is a "text button". */
const INLINE_BUTTON_ACTIONS = [
  "url",
  "callback_data",
  "web_app",
  "login_url",
  "switch_inline_query",
  "switch_inline_query_current_chat",
  "switch_inline_query_chosen_chat",
  "copy_text",
  "callback_game",
  "pay",
];

export function readReplyMarkup(params: Params): Record<string, unknown> | undefined {
  const raw = optJson(params, "reply_markup", "reply keyboard markup");
  if (raw === undefined) return undefined;
  if (!isRecord(raw)) throw badRequest("can't parse reply keyboard markup JSON object");
  if (!("inline_keyboard" in raw)) return raw;
  const rows = raw.inline_keyboard;
  if (!Array.isArray(rows)) throw badRequest('field "inline_keyboard" of the InlineKeyboardMarkup must be an Array');
  for (const row of rows) {
    if (!Array.isArray(row)) throw badRequest('field "inline_keyboard" of the InlineKeyboardMarkup must be an Array of Arrays');
    for (const button of row) {
      if (!isRecord(button) || typeof button.text !== "string") throw badRequest('can\'t parse inline keyboard button: Field "text" must be of type String');
      if (!INLINE_BUTTON_ACTIONS.some((k) => button[k] !== undefined)) throw badRequest("text buttons are unallowed in the inline keyboard");
      const data = button.callback_data;
      // The 64-byte limit is in UTF-8 bytes, a classic trap for non-ASCII payloads.
      if (data !== undefined && (typeof data !== "string" || data === "" || byteLength(data) > 64)) throw badRequest("BUTTON_DATA_INVALID");
      if (button.url !== undefined && (typeof button.url !== "string" || !isValidUrl(button.url))) {
        throw badRequest(`inline keyboard button URL '${String(button.url)}' is invalid: Wrong HTTP URL`);
      }
    }
  }
  return raw;
}

// ---- reactions and chat actions ---------------------------------------------------

/** The emoji a bot may react with (Bot API ReactionTypeEmoji); anything else is REACTION_INVALID. */
export const REACTION_EMOJI = new Set([
  "👍",
  "👎",
  "❤",
  "🔥",
  "🥰",
  "👏",
  "😁",
  "🤔",
  "🤯",
  "😱",
  "🤬",
  "😢",
  "🎉",
  "🤩",
  "🤮",
  "💩",
  "🙏",
  "👌",
  "🕊",
  "🤡",
  "🥱",
  "🥴",
  "😍",
  "🐳",
  "❤‍🔥",
  "🌚",
  "🌭",
  "💯",
  "🤣",
  "⚡",
  "🍌",
  "🏆",
  "💔",
  "🤨",
  "😐",
  "🍓",
  "🍾",
  "💋",
  "🖕",
  "😈",
  "😴",
  "😭",
  "🤓",
  "👻",
  "👨‍💻",
  "👀",
  "🎃",
  "🙈",
  "😇",
  "😨",
  "🤝",
  "✍",
  "🤗",
  "🫡",
  "🎅",
  "🎄",
  "☃",
  "💅",
  "🤪",
  "🗿",
  "🆒",
  "💘",
  "🙉",
  "🦄",
  "😘",
  "💊",
  "🙊",
  "😎",
  "👾",
  "🤷‍♂",
  "🤷",
  "🤷‍♀",
  "😡",
]);

export function readReaction(params: Params): Record<string, unknown>[] {
  const raw = optJson(params, "reaction", "reaction");
  if (raw === undefined) return [];
  if (!Array.isArray(raw)) throw badRequest('field "reaction" must be an Array');
  // "as non-premium users, bots can set up to one reaction per message"
  if (raw.length > 1) throw badRequest("REACTIONS_TOO_MANY");
  for (const r of raw) {
    if (!isRecord(r)) throw badRequest("REACTION_INVALID");
    const ok =
      (r.type === "emoji" && typeof r.emoji === "string" && REACTION_EMOJI.has(r.emoji)) ||
      (r.type === "custom_emoji" && typeof r.custom_emoji_id === "string") ||
      r.type === "paid";
    if (!ok) throw badRequest("REACTION_INVALID");
  }
  return raw as Record<string, unknown>[];
}

export const CHAT_ACTIONS = new Set([
  "typing",
  "upload_photo",
  "record_video",
  "upload_video",
  "record_voice",
  "upload_voice",
  "upload_document",
  "choose_sticker",
  "find_location",
  "record_video_note",
  "upload_video_note",
]);
