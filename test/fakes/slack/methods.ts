// The Web API methods the Slack fake implements. Each handler validates like
// Slack, throws a SlackError for `{ ok: false, error }`, and otherwise returns
// the fields that go beside `ok: true`.

import { BLOCKS_ONLY_TEXT, validateBlocks } from "./blocks.js";
import { optString, optStringKeepEmpty, SlackError, withMessages, type Params } from "./common.js";
import type { State, StoredMessage } from "./state.js";

export const TEAM_ID = "T0TEST";
export const TEAM_NAME = "Test Team";
export const TEAM_URL = "https://test-team.slack.com/";
export const BOT_USER_ID = "U0BOT";
export const BOT_ID = "B0BOT";
export const BOT_NAME = "switchboard";
export const APP_ID = "A0TEST";
export const MAX_TEXT = 40_000;

/** What setStatusAvailable(false) answers by default: an app without the assistant scope. */
export const STATUS_UNAVAILABLE = "missing_scope";
const MISSING_SCOPE_EXTRA = { needed: "assistant:write", provided: "app_mentions:read,channels:history,chat:write,commands,im:history,reactions:write" };

/** A Socket Mode endpoint (test/fakes/slack/socket-mode.ts) attached to the fake: its app-level token and a URL minter. */
export interface SocketModeLink {
  appToken: string;
  /** A fresh one-time WebSocket URL, like Slack's `wss://…/link/?ticket=…&app_id=…`. */
  open(): string;
}

export type Handler = (state: State, params: Params, seq: number, socketMode: SocketModeLink | null) => Record<string, unknown>;

/** text / blocks / attachments of a message, validated; throws no_text when there is none. */
function content(params: Params): { text?: string; blocks?: Record<string, unknown>[] } {
  const text = optString(params, "text");
  let blocks: Record<string, unknown>[] | undefined;
  if (params.blocks !== undefined && params.blocks !== null && params.blocks !== "") {
    const value = params.blocks;
    validateBlocks(value);
    blocks = value;
  }
  const attachments = params.attachments;
  const hasAttachments = Array.isArray(attachments) && attachments.length > 0;
  if (text === undefined && !(blocks && blocks.length > 0) && !hasAttachments) throw new SlackError("no_text");
  if (text !== undefined && text.length > MAX_TEXT) throw new SlackError("msg_too_long");
  return { ...(text !== undefined && { text }), ...(blocks !== undefined && { blocks }) };
}

export function requireChannel(params: Params, name = "channel"): string {
  const channel = optString(params, name);
  if (channel === undefined) throw new SlackError("channel_not_found");
  return channel;
}

/** Slack's refusals for a channel the bot may not post in: archived, or not a member (IMs always are). */
export function postable(state: State, channel: string) {
  const info = state.channels.get(channel);
  if (info?.is_archived) throw new SlackError("is_archived");
  if (info && info.is_member === false && !info.is_im) throw new SlackError("not_in_channel");
}

export function messageJson(m: StoredMessage): Record<string, unknown> {
  return {
    type: "message",
    user: m.user,
    ...(m.bot_id !== undefined && { bot_id: m.bot_id, app_id: APP_ID }),
    text: m.text,
    ts: m.ts,
    team: TEAM_ID,
    ...(m.thread_ts !== undefined && { thread_ts: m.thread_ts }),
    ...(m.blocks !== undefined && { blocks: m.blocks }),
  };
}

function reactionTarget(state: State, params: Params): { message: StoredMessage; name: string } {
  const channel = optString(params, "channel");
  const timestamp = optString(params, "timestamp");
  if (channel === undefined || timestamp === undefined) throw new SlackError("no_item_specified");
  const name = optString(params, "name");
  if (name === undefined) throw new SlackError("invalid_name");
  const message = state.find(channel, timestamp);
  if (!message) throw new SlackError("message_not_found");
  return { message, name };
}

export const METHODS: Record<string, Handler> = {
  "auth.test": () => ({
    url: TEAM_URL,
    team: TEAM_NAME,
    user: BOT_NAME,
    team_id: TEAM_ID,
    user_id: BOT_USER_ID,
    bot_id: BOT_ID,
    is_enterprise_install: false,
  }),

  "chat.postMessage": (state, params) => {
    const channel = requireChannel(params);
    postable(state, channel);
    const { text, blocks } = content(params);
    let threadTs: string | undefined;
    const requested = optString(params, "thread_ts");
    if (requested !== undefined) {
      const parent = state.find(channel, requested);
      if (!parent) throw new SlackError("thread_not_found");
      // A reply to a reply lands in the root's thread.
      threadTs = parent.thread_ts ?? parent.ts;
    }
    const message: StoredMessage = {
      channel,
      ts: state.nextTs(),
      ...(threadTs !== undefined && { thread_ts: threadTs }),
      user: BOT_USER_ID,
      bot_id: BOT_ID,
      text: text ?? (blocks && blocks.length > 0 ? BLOCKS_ONLY_TEXT : ""),
      ...(blocks !== undefined && { blocks }),
      params,
      edits: 0,
      deleted: false,
      reactions: [],
    };
    state.store(message);
    state.posted.push(message);
    return { channel, ts: message.ts, message: messageJson(message) };
  },

  "chat.update": (state, params) => {
    const channel = requireChannel(params);
    const ts = optString(params, "ts");
    const message = ts === undefined ? undefined : state.find(channel, ts);
    if (!message) throw new SlackError("message_not_found");
    if (message.bot_id === undefined) throw new SlackError("cant_update_message");
    // chat.update's documented "streaming_state_conflict: The message is currently streaming text and cannot be edited."
    if (message.stream?.status === "streaming") throw new SlackError("streaming_state_conflict");
    const { text, blocks } = content(params);
    // Omitted blocks are kept, `blocks: []` removes them (as documented for chat.update); omitted text is kept.
    if (text !== undefined) message.text = text;
    if (blocks !== undefined) {
      if (blocks.length > 0) message.blocks = blocks;
      else delete message.blocks;
    }
    message.edits++;
    return { channel, ts: message.ts, text: message.text, message: messageJson(message) };
  },

  "chat.postEphemeral": (state, params, seq) => {
    const channel = requireChannel(params);
    const user = optString(params, "user");
    if (user === undefined) throw new SlackError("user_not_in_channel");
    const { text, blocks } = content(params);
    const threadTs = optString(params, "thread_ts");
    const message_ts = state.nextTs();
    state.ephemerals.push({
      channel,
      user,
      text: text ?? "",
      ...(threadTs !== undefined && { thread_ts: threadTs }),
      ...(blocks !== undefined && { blocks }),
      message_ts,
      seq,
    });
    return { message_ts };
  },

  "chat.delete": (state, params) => {
    const channel = requireChannel(params);
    const ts = optString(params, "ts");
    const message = ts === undefined ? undefined : state.find(channel, ts);
    if (!message) throw new SlackError("message_not_found");
    if (message.bot_id === undefined) throw new SlackError("cant_delete_message");
    message.deleted = true;
    return { channel, ts: message.ts };
  },

  "reactions.add": (state, params, seq) => {
    const { message, name } = reactionTarget(state, params);
    if (message.reactions.includes(name)) throw new SlackError("already_reacted");
    message.reactions.push(name);
    state.reactionLog.push({ op: "add", channel: message.channel, timestamp: message.ts, name, seq });
    return {};
  },

  "reactions.remove": (state, params, seq) => {
    const { message, name } = reactionTarget(state, params);
    const at = message.reactions.indexOf(name);
    if (at < 0) throw new SlackError("no_reaction");
    message.reactions.splice(at, 1);
    state.reactionLog.push({ op: "remove", channel: message.channel, timestamp: message.ts, name, seq });
    return {};
  },

  "assistant.threads.setStatus": (state, params, seq) => {
    if (state.statusError !== null) {
      throw new SlackError(state.statusError, state.statusError === "missing_scope" ? MISSING_SCOPE_EXTRA : {});
    }
    const channel_id = optString(params, "channel_id");
    const thread_ts = optString(params, "thread_ts");
    const status = optStringKeepEmpty(params, "status");
    const missing = [...(channel_id === undefined ? ["channel_id"] : []), ...(thread_ts === undefined ? ["thread_ts"] : []), ...(status === undefined ? ["status"] : [])];
    if (missing.length > 0 || channel_id === undefined || thread_ts === undefined || status === undefined) {
      throw withMessages("invalid_arguments", ...missing.map((f) => `[ERROR] missing required field: ${f}`));
    }
    state.statuses.push({ channel_id, thread_ts, status, seq });
    return {};
  },

  "assistant.threads.setSuggestedPrompts": (state, params, seq) => {
    const channel_id = optString(params, "channel_id");
    if (channel_id === undefined) throw withMessages("invalid_arguments", "[ERROR] missing required field: channel_id");
    const prompts = params.prompts;
    if (!Array.isArray(prompts) || prompts.length === 0) throw withMessages("invalid_arguments", "[ERROR] missing required field: prompts");
    if (prompts.length > 4) throw withMessages("invalid_arguments", "[ERROR] no more than 4 items allowed [json-pointer:/prompts]");
    prompts.forEach((p: unknown, i) => {
      const prompt = p as Record<string, unknown> | null;
      for (const field of ["title", "message"]) {
        if (typeof prompt?.[field] !== "string" || prompt[field] === "") {
          throw withMessages("invalid_arguments", `[ERROR] missing required field: ${field} [json-pointer:/prompts/${i}/${field}]`);
        }
      }
    });
    const thread_ts = optString(params, "thread_ts");
    const title = optString(params, "title");
    state.suggestedPrompts.push({
      channel_id,
      ...(thread_ts !== undefined && { thread_ts }),
      ...(title !== undefined && { title }),
      prompts: prompts as Array<{ title: string; message: string }>,
      seq,
    });
    return {};
  },

  "conversations.info": (state, params) => {
    const channel = state.channels.get(requireChannel(params));
    if (!channel) throw new SlackError("channel_not_found");
    return { channel: { ...channel } };
  },

  // Called with the app-level (xapp-) token, checked in server.ts; without an attached endpoint no token is valid.
  "apps.connections.open": (_state, _params, _seq, socketMode) => {
    if (!socketMode) throw new SlackError("invalid_auth");
    return { url: socketMode.open() };
  },
};
