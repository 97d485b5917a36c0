// Reading messages back: conversations.history (a channel's top-level messages, newest first) and
// conversations.replies (a thread, root first), over everything the fake holds: users' messages, the bot's posts
// and its streamed messages as they stand (a stream's partial text while it streams).
//
// Source: the method pages (docs.slack.dev/reference/methods/conversations.replies, .history) as copied in
// slack-ruby/slack-api-ref: arguments channel, ts (replies), limit, cursor; errors channel_not_found,
// thread_not_found ("Value for ts was missing or invalid."), invalid_cursor; the response's has_more and
// response_metadata.next_cursor, which is base64 of "next_ts:<ts>" in the documented example; a thread's root carries
// reply_count and its replies parent_user_id.
// ASSUMPTIONS: latest / oldest / inclusive are ignored; limit defaults to 100 (history) and 1000 (replies); every
// known conversation is readable (no not_in_channel here).

import { optString, SlackError, type Params } from "./common.js";
import { messageJson, requireChannel, type Handler } from "./methods.js";
import type { State, StoredMessage, VisibleMessage } from "./state.js";

const byTs = (a: StoredMessage, b: StoredMessage) => Number(a.ts) - Number(b.ts) || a.ts.localeCompare(b.ts);

function inChannel(state: State, channel: string): StoredMessage[] {
  return [...state.messages.values()].filter((m) => m.channel === channel && !m.deleted).sort(byTs);
}

/** One page of `list` from `cursor`, the way Slack's cursor pagination answers. */
function page(list: Array<Record<string, unknown> & { ts: string }>, params: Params, defaultLimit: number) {
  const limit = Math.max(1, Math.floor(Number(optString(params, "limit") ?? defaultLimit)) || defaultLimit);
  let start = 0;
  const cursor = optString(params, "cursor");
  if (cursor !== undefined) {
    const m = /^next_ts:(.+)$/.exec(Buffer.from(cursor, "base64").toString("utf8"));
    start = m ? list.findIndex((x) => x.ts === m[1]) : -1;
    if (start < 0) throw new SlackError("invalid_cursor");
  }
  const next = list[start + limit];
  return {
    messages: list.slice(start, start + limit),
    has_more: next !== undefined,
    ...(next !== undefined && { response_metadata: { next_cursor: Buffer.from(`next_ts:${next.ts}`).toString("base64") } }),
  };
}

/**
 * What a member of the conversation sees now (the thread whose root is `thread`, or the channel's top level, as a
 * Slack client shows them): users' and the bot's messages in order, deleted ones gone, the current text of each, and
 * where a streamed message's stream is. Ephemerals are not in it (only their one user sees them).
 */
export function visibleMessages(state: State, channel: string, thread?: string): VisibleMessage[] {
  return inChannel(state, channel)
    .filter((m) => (thread === undefined ? m.thread_ts === undefined : m.ts === thread || m.thread_ts === thread))
    .map((m) => ({ ts: m.ts, fromBot: m.bot_id !== undefined, text: m.text, ...(m.stream && { stream: m.stream.status }) }));
}

export const HISTORY_METHODS: Record<string, Handler> = {
  "conversations.history": (state, params) => {
    const channel = requireChannel(params);
    if (!state.channels.has(channel)) throw new SlackError("channel_not_found");
    const all = inChannel(state, channel);
    const replies = (root: StoredMessage) => all.filter((m) => m.thread_ts === root.ts);
    const top = all.filter((m) => m.thread_ts === undefined).reverse();
    return page(
      top.map((m) => ({ ...messageJson(m), ts: m.ts, ...(replies(m).length > 0 && { thread_ts: m.ts, reply_count: replies(m).length }) })),
      params,
      100,
    );
  },

  "conversations.replies": (state, params) => {
    const channel = requireChannel(params);
    if (!state.channels.has(channel)) throw new SlackError("channel_not_found");
    const ts = optString(params, "ts");
    const named = ts === undefined ? undefined : state.find(channel, ts);
    if (!named) throw new SlackError("thread_not_found");
    const root = named.thread_ts === undefined ? named : state.find(channel, named.thread_ts);
    if (!root) throw new SlackError("thread_not_found");
    const replies = inChannel(state, channel).filter((m) => m.thread_ts === root.ts);
    const rootJson = { ...messageJson(root), ts: root.ts, ...(replies.length > 0 && { thread_ts: root.ts, reply_count: replies.length }) };
    return page([rootJson, ...replies.map((m) => ({ ...messageJson(m), ts: m.ts, parent_user_id: root.user }))], params, 1000);
  },
};
