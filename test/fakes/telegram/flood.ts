// Opt-in flood control: too many messages to one chat (or overall) answer 429 with retry_after, as Telegram does.
//
// The limits are the documented ones, Bot FAQ "My bot is hitting limits, how do I avoid this?"
// (core.telegram.org/bots/faq): "When sending messages inside a particular chat, avoid sending more than one message
// per second. We may allow short bursts that go over this limit, but eventually you'll begin receiving 429 errors.
// If you're sending bulk notifications to multiple users, the API will not allow more than 30 messages per second or
// so. ... your bot will not be able to send more than 20 messages per minute to the same group." grammY's "Scaling
// Up IV: Flood Limits" page quotes the same FAQ and adds that the real limits are flexible, so every number here is
// configurable. The answer body is the Bot API server's (tdlib/telegram-bot-api Query::set_retry_after_error):
// {"ok":false,"error_code":429,"description":"Too Many Requests: retry after N","parameters":{"retry_after":N}}.
//
// ASSUMPTIONS: which methods count (default sendMessage and editMessageText — the FAQ says "messages"; public bots
// report edits sharing the per-chat budget; add sendMessageDraft or sendChatAction through `methods`); a refused or
// failed call does not count; the per-chat window applies to every chat type and groups get the per-minute one on
// top; retry_after is the whole seconds until the window has room again (at least 1).

import { TgError } from "./common.js";

export interface FloodWindow {
  count: number;
  windowMs: number;
}

export interface FloodLimits {
  /** Methods that count against the limits (case-insensitive). Default: sendMessage, editMessageText. */
  methods?: string[];
  /** Any one chat. Default 1 per 1000 ms ("no more than one message per second"); null: no such limit. */
  perChat?: FloodWindow | null;
  /** One group, supergroup or channel, on top of perChat. Default 20 per 60000 ms. */
  perGroup?: FloodWindow | null;
  /** All chats together. Default 30 per 1000 ms. */
  overall?: FloodWindow | null;
}

export const FLOOD_DEFAULTS = {
  methods: ["sendMessage", "editMessageText"],
  perChat: { count: 1, windowMs: 1000 },
  perGroup: { count: 20, windowMs: 60_000 },
  overall: { count: 30, windowMs: 1000 },
} as const satisfies Required<FloodLimits>;

interface Sent {
  chatId: number;
  at: number;
}

export class FloodControl {
  private readonly methods: Set<string>;
  private readonly windows: Array<{ window: FloodWindow; applies: (chatId: number, group: boolean) => ((s: Sent) => boolean) | null }>;
  private log: Sent[] = [];

  constructor(
    limits: FloodLimits,
    private readonly now: () => number,
  ) {
    this.methods = new Set((limits.methods ?? FLOOD_DEFAULTS.methods).map((m) => m.toLowerCase()));
    const perChat = limits.perChat === undefined ? FLOOD_DEFAULTS.perChat : limits.perChat;
    const perGroup = limits.perGroup === undefined ? FLOOD_DEFAULTS.perGroup : limits.perGroup;
    const overall = limits.overall === undefined ? FLOOD_DEFAULTS.overall : limits.overall;
    const sameChat = (chatId: number) => (s: Sent) => s.chatId === chatId;
    this.windows = [
      ...(perChat ? [{ window: perChat, applies: (chatId: number) => sameChat(chatId) }] : []),
      ...(perGroup ? [{ window: perGroup, applies: (chatId: number, group: boolean) => (group ? sameChat(chatId) : null) }] : []),
      ...(overall ? [{ window: overall, applies: () => () => true }] : []),
    ];
  }

  counts(method: string): boolean {
    return this.methods.has(method.toLowerCase());
  }

  /** The 429 a call of `method` to `chat` gets now, or null if it may go through. */
  check(method: string, chat: { id: number; type: string }): TgError | null {
    if (!this.counts(method)) return null;
    const now = this.now();
    const group = chat.type !== "private";
    let waitMs = 0;
    for (const { window, applies } of this.windows) {
      const matches = applies(chat.id, group);
      if (!matches) continue;
      const inWindow = this.log.filter((s) => matches(s) && s.at > now - window.windowMs);
      if (inWindow.length < window.count) continue;
      // Room for one more once the oldest entries beyond (count - 1) have left the window.
      const freeing = inWindow[inWindow.length - window.count]!;
      waitMs = Math.max(waitMs, freeing.at + window.windowMs - now);
    }
    if (waitMs <= 0) return null;
    const seconds = Math.max(1, Math.ceil(waitMs / 1000));
    return new TgError(429, `Too Many Requests: retry after ${seconds}`, { retry_after: seconds });
  }

  /** Counts a call that went through. */
  record(method: string, chatId: number): void {
    if (!this.counts(method)) return;
    const now = this.now();
    const longest = Math.max(0, ...this.windows.map((w) => w.window.windowMs));
    this.log = this.log.filter((s) => s.at > now - longest);
    this.log.push({ chatId, at: now });
  }
}
