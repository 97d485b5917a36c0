// Everything the Telegram fake remembers: chats and their messages, what the
// bot sent, the update queue, commands and the webhook. The HTTP layer
// (server.ts) and the method handlers (methods.ts) both work on one State.

import { badRequest, optString, type MessageEntity, type Params } from "./common.js";
import type { DraftUpdate } from "./drafts.js";
import type { BotCommand } from "./validate.js";

export type TgObject = Record<string, unknown>;

/** An Update as Telegram sends it; payloads are kept loose on purpose (tests build them by hand). */
export interface TgUpdate {
  update_id: number;
  message?: TgObject;
  edited_message?: TgObject;
  channel_post?: TgObject;
  edited_channel_post?: TgObject;
  business_connection?: TgObject;
  business_message?: TgObject;
  edited_business_message?: TgObject;
  deleted_business_messages?: TgObject;
  message_reaction?: TgObject;
  message_reaction_count?: TgObject;
  inline_query?: TgObject;
  chosen_inline_result?: TgObject;
  callback_query?: TgObject;
  shipping_query?: TgObject;
  pre_checkout_query?: TgObject;
  purchased_paid_media?: TgObject;
  poll?: TgObject;
  poll_answer?: TgObject;
  my_chat_member?: TgObject;
  chat_member?: TgObject;
  chat_join_request?: TgObject;
  stopped_message_generation?: TgObject;
  chat_boost?: TgObject;
  removed_chat_boost?: TgObject;
}

/** Delivered only when asked for in allowed_updates, as on Telegram. */
const OPT_IN_UPDATES = new Set(["chat_member", "message_reaction", "message_reaction_count"]);
const MESSAGE_UPDATES = ["message", "edited_message", "channel_post", "edited_channel_post", "business_message", "edited_business_message"] as const;

export interface SentMessage {
  chat_id: number;
  message_id: number;
  /** Current text (after edits), as Telegram stores it: parsed, cleaned, trimmed. */
  text: string;
  entities: MessageEntity[];
  parse_mode?: string;
  message_thread_id?: number;
  reply_to_message_id?: number;
  reply_markup?: Record<string, unknown>;
  /** Raw parameters of the call that produced the current content (sendMessage or the last editMessageText). */
  params: Params;
  /** Earlier versions, oldest first; empty if never edited. */
  history: Array<{ text: string; entities: MessageEntity[] }>;
  deleted: boolean;
  /** When it was sent: the call's sequence number (as ApiCall.at) and the fake clock in ms. */
  seq: number;
  at: number;
}

/**
 * What the user saw happen in a chat, in order: messages the bot sent, their edits and deletions, and draft
 * updates (sendMessageDraft). `seq` is ApiCall.at; `at` is the fake clock in ms.
 */
export type ChatEvent =
  | { kind: "message"; chat_id: number; message_thread_id?: number; message_id: number; text: string; seq: number; at: number }
  | { kind: "edit"; chat_id: number; message_id: number; text: string; seq: number; at: number }
  | { kind: "delete"; chat_id: number; message_id: number; seq: number; at: number }
  | { kind: "draft"; chat_id: number; message_thread_id?: number; draft_id: number; text: string; seq: number; at: number };

/** One message as the chat shows it now (see State.visible). */
export interface VisibleMessage {
  message_id: number;
  fromBot: boolean;
  message_thread_id?: number;
  /** The current text (a caption for media), with every edit applied. */
  text: string;
}

export interface ChatAction {
  chat_id: number;
  action: string;
  message_thread_id?: number;
  /** Same counter as ApiCall.at, so actions and messages can be ordered against each other. */
  seq: number;
}

export interface StoredMessage {
  message: TgObject;
  fromBot: boolean;
  deleted: boolean;
  /** Present for messages the bot sent through sendMessage. */
  sent?: SentMessage;
}

export interface ChatState {
  chat: TgObject;
  /** Message ids are per chat and shared by users and the bot. */
  lastMessageId: number;
  messages: Map<number, StoredMessage>;
}

function chatIdOf(value: unknown): number | undefined {
  return typeof value === "object" && value !== null && typeof (value as TgObject).id === "number" ? ((value as TgObject).id as number) : undefined;
}

export class State {
  readonly botUser: TgObject;
  chats = new Map<number, ChatState>();
  sent: SentMessage[] = [];
  /** Every sendMessageDraft that succeeded, oldest first. */
  drafts: DraftUpdate[] = [];
  events: ChatEvent[] = [];
  actions: ChatAction[] = [];
  commands = new Map<string, BotCommand[]>();
  webhook: { url: string; secret_token?: string } | null = null;
  /** callback_query ids seen in updates → answered yet? */
  callbackQueries = new Map<string, boolean>();
  queue: TgUpdate[] = [];
  /** Never reset: a running bot keeps its offset across fake.reset(), so ids must keep growing. */
  nextUpdateId = 1;
  allowedUpdates: string[] | null = null;
  /** Chat administrators by chat id → user id → status ("creator" or "administrator"); everyone else is a member. */
  admins = new Map<number, Map<number, "creator" | "administrator">>();
  seq = 0;
  /** Basic groups that became supergroups: old id → new id. Every call naming the old id fails as on Telegram. */
  migratedTo = new Map<number, number>();

  constructor(
    readonly botId: number,
    readonly botUsername: string,
    /** Milliseconds since the epoch: message dates, draft expiry and flood-control windows read it. */
    public now: () => number = Date.now,
  ) {
    this.botUser = { id: botId, is_bot: true, first_name: "Switchboard", username: botUsername };
  }

  /** Unix time as Telegram puts it in `date` fields. */
  nowSeconds(): number {
    return Math.floor(this.now() / 1000);
  }

  reset() {
    this.chats.clear();
    this.sent = [];
    this.drafts = [];
    this.events = [];
    this.actions = [];
    this.commands.clear();
    this.webhook = null;
    this.callbackQueries.clear();
    this.queue = [];
    this.allowedUpdates = null;
    this.migratedTo.clear();
    this.admins.clear();
  }

  /** The group `from` became the supergroup `to` (same title): `from` is dead from now on, `to` is a chat the bot is in. */
  migrate(from: number, to: number) {
    const old = this.chats.get(from)?.chat;
    this.migratedTo.set(from, to);
    this.registerChat({ id: to, type: "supergroup", ...(typeof old?.title === "string" && { title: old.title }) });
  }

  registerChat(chat: TgObject): ChatState {
    const id = chatIdOf(chat)!;
    const known = this.chats.get(id);
    if (known) {
      Object.assign(known.chat, chat);
      return known;
    }
    const state: ChatState = { chat: { ...chat }, lastMessageId: 0, messages: new Map() };
    this.chats.set(id, state);
    return state;
  }

  /** The chat named by `chat_id` (number, numeric string or "@username"), or 400 "chat not found". */
  resolveChat(params: Params, field = "chat_id"): ChatState {
    const raw = params[field];
    if (raw === undefined || raw === null || raw === "") throw badRequest(`${field} is empty`);
    const str = optString(params, field)!.trim();
    if (str.startsWith("@")) {
      const name = str.slice(1).toLowerCase();
      for (const c of this.chats.values()) {
        if (typeof c.chat.username === "string" && c.chat.username.toLowerCase() === name) return c;
      }
    } else if (/^-?\d+$/.test(str)) {
      const found = this.chats.get(Number(str));
      if (found) return found;
    }
    throw badRequest("chat not found");
  }

  allocateMessageId(chat: ChatState): number {
    return ++chat.lastMessageId;
  }

  /** Remembers a message so the bot can reply to / edit / react to it; keeps the id counter ahead of it. */
  noteMessage(chat: ChatState, message: TgObject, fromBot: boolean): StoredMessage | undefined {
    const id = message.message_id;
    if (typeof id !== "number") return undefined;
    chat.lastMessageId = Math.max(chat.lastMessageId, id);
    const known = chat.messages.get(id);
    if (known) {
      known.message = message;
      return known;
    }
    const stored: StoredMessage = { message, fromBot, deleted: false };
    chat.messages.set(id, stored);
    return stored;
  }

  /** Learns chats, messages and callback queries from an update pushed by a test. */
  ingest(update: TgUpdate) {
    const noteWithChat = (message: unknown) => {
      if (typeof message !== "object" || message === null) return;
      const msg = message as TgObject;
      if (chatIdOf(msg.chat) === undefined) return;
      const chat = this.registerChat(msg.chat as TgObject);
      if (typeof msg.reply_to_message === "object" && msg.reply_to_message !== null) {
        const reply = msg.reply_to_message as TgObject;
        this.noteMessage(chat, reply, chatIdOf(reply.from) === this.botId);
      }
      this.noteMessage(chat, msg, chatIdOf(msg.from) === this.botId);
      // The old group's service message announcing the move: from now on Telegram answers for the old id with the migration error.
      if (typeof msg.migrate_to_chat_id === "number") this.migrate(chatIdOf(msg.chat)!, msg.migrate_to_chat_id);
    };
    for (const key of MESSAGE_UPDATES) noteWithChat(update[key]);
    const query = update.callback_query;
    if (query) {
      if (typeof query.id === "string") this.callbackQueries.set(query.id, false);
      noteWithChat(query.message);
    }
    for (const key of ["my_chat_member", "chat_member", "chat_join_request", "message_reaction", "message_reaction_count"] as const) {
      const chat = update[key]?.chat;
      if (chatIdOf(chat) !== undefined) this.registerChat(chat as TgObject);
    }
  }

  /**
   * What a member scrolling the chat (or one forum topic) sees now: every message, the users' and the bot's, in
   * order, except deleted ones, each with its current text. As on Telegram: editMessageText changes a message in
   * place (same message_id, the edited text replaces the old one for everyone; "edited" is only a label), and
   * deleteMessage removes it for everyone in groups and for both sides in private chats (Bot API, #editmessagetext
   * and #deletemessage). Drafts are not messages: a draft is a 30-second preview shown beside them (visibleDraft).
   */
  visible(chatId: number, threadId?: number): VisibleMessage[] {
    const chat = this.chats.get(chatId);
    if (!chat) return [];
    return [...chat.messages.entries()]
      .filter(([, m]) => !m.deleted)
      .filter(([, m]) => threadId === undefined || m.message.message_thread_id === threadId)
      .sort(([a], [b]) => a - b)
      .map(([id, m]) => {
        const thread = typeof m.message.message_thread_id === "number" ? m.message.message_thread_id : undefined;
        const text = m.sent?.text ?? (typeof m.message.text === "string" ? m.message.text : typeof m.message.caption === "string" ? m.message.caption : "");
        return { message_id: id, fromBot: m.fromBot, ...(thread !== undefined && { message_thread_id: thread }), text };
      });
  }

  enqueue(update: TgUpdate) {
    this.queue = this.queue.filter((u) => u.update_id !== update.update_id);
    this.queue.push(update);
    this.queue.sort((a, b) => a.update_id - b.update_id);
  }

  /** getUpdates' offset semantics: a positive offset confirms (forgets) everything below it; -N keeps only the last N. */
  confirm(offset: number) {
    if (offset < 0) this.queue = this.queue.slice(offset);
    else if (offset > 0) this.queue = this.queue.filter((u) => u.update_id >= offset);
  }

  /** Queued updates a getUpdates(offset, limit) would return now (respecting allowed_updates). */
  available(offset: number, limit: number): TgUpdate[] {
    const allowed = this.allowedUpdates;
    return this.queue
      .filter((u) => offset <= 0 || u.update_id >= offset)
      .filter((u) => {
        const type = Object.keys(u).find((k) => k !== "update_id");
        if (type === undefined) return true;
        return allowed ? allowed.includes(type) : !OPT_IN_UPDATES.has(type);
      })
      .slice(0, limit);
  }
}
