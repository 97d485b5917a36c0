// What the Slack fake remembers: messages per channel (the bot's and the ones
// users posted, so thread replies and reactions can be checked), ephemerals,
// reactions, assistant statuses and suggested prompts, response_url posts and known channels.
// A streamed message (chat.startStream) is an ordinary message with a `stream` record beside it.

import type { Params } from "./common.js";

export interface StoredMessage {
  channel: string;
  ts: string;
  /** Root ts of the thread this message is in (undefined for a root message). */
  thread_ts?: string;
  user: string;
  /** Set for messages the bot posted. */
  bot_id?: string;
  text: string;
  blocks?: unknown[];
  /** Parameters of the chat.postMessage that created it (empty for user messages). */
  params: Params;
  edits: number;
  deleted: boolean;
  /** Reactions the bot added, in order. */
  reactions: string[];
  /** Set for a message created by chat.startStream. */
  stream?: StreamRecord;
}

/**
 * Where a streamed message is: "streaming" until chat.stopStream ("stopped"); a user pressing Stop
 * ("stopped_by_user") or Slack ending an idle/old stream ("expired") end it too (see FakeSlack.endStream).
 */
export type StreamStatus = "streaming" | "stopped" | "stopped_by_user" | "expired";

/** One accepted chat.startStream / appendStream / stopStream call on a streamed message. */
export interface StreamUpdate {
  method: "chat.startStream" | "chat.appendStream" | "chat.stopStream";
  /** The markdown this call added: its markdown_text, or the text of its markdown_text chunks joined. */
  markdown: string;
  /** The chunks it sent (JSON-decoded), [] when it sent markdown_text or nothing. */
  chunks: unknown[];
  /** The message's whole text right after this call: what a reader saw at that moment. */
  text: string;
  seq: number;
}

export interface StreamRecord {
  status: StreamStatus;
  /** Fixed by the first call that carries content; later calls must use the same one (streaming_mode_mismatch). */
  mode?: "markdown_text" | "chunks";
  recipient_user_id?: string;
  recipient_team_id?: string;
  /** Blocks sent in `blocks` chunks, counted against their own 50-block budget. */
  chunkBlocks: unknown[];
  updates: StreamUpdate[];
}

/** A streamed message as tests see it (FakeSlack.streams()). */
export interface Streamed {
  channel: string;
  ts: string;
  /** Root of the thread it replies in. */
  thread_ts?: string;
  /** Current text: the markdown streamed so far; final once status is no longer "streaming". */
  text: string;
  /** Blocks from `blocks` chunks, then chat.stopStream's `blocks`. */
  blocks?: unknown[];
  status: StreamStatus;
  mode?: "markdown_text" | "chunks";
  recipient_user_id?: string;
  recipient_team_id?: string;
  /** Every accepted start/append/stop in order, each with the text visible after it. */
  updates: StreamUpdate[];
  /** Parameters of the chat.startStream call. */
  params: Params;
}

export interface Posted {
  channel: string;
  ts: string;
  thread_ts?: string;
  /** Current text (after chat.update); "This content can't be displayed." for a blocks-only message. */
  text: string;
  blocks?: unknown[];
  /** Parameters of the chat.postMessage (or chat.startStream) call (JSON fields such as blocks decoded). */
  params: Params;
  /** How many chat.update calls changed it. */
  edits: number;
  /** Set once chat.delete removed it. */
  deleted?: true;
  /** For a streamed message (chat.startStream): where its stream is. */
  stream?: StreamStatus;
}

/** One message as a member of the conversation sees it now (FakeSlack.visible). */
export interface VisibleMessage {
  ts: string;
  /** Posted (or streamed) by the bot. */
  fromBot: boolean;
  /** The current text: with chat.update applied; a streamed message's text so far, final once it stopped. */
  text: string;
  /** For a streamed message: "streaming" while it is still being written (half a reply on screen). */
  stream?: StreamStatus;
}

export interface Ephemeral {
  channel: string;
  user: string;
  text: string;
  thread_ts?: string;
  blocks?: unknown[];
  message_ts: string;
  seq: number;
}

export interface ReactionEntry {
  op: "add" | "remove";
  channel: string;
  timestamp: string;
  name: string;
  seq: number;
}

export interface StatusEntry {
  channel_id: string;
  thread_ts: string;
  status: string;
  seq: number;
}

export interface SuggestedPrompts {
  channel_id: string;
  /** Absent when set for the app's Messages tab rather than one thread. */
  thread_ts?: string;
  title?: string;
  prompts: Array<{ title: string; message: string }>;
  seq: number;
}

export interface ResponseUrlPost {
  /** The response_url it was posted to. */
  url: string;
  body: Record<string, unknown>;
  seq: number;
}

export interface ChannelInfo {
  id: string;
  name?: string;
  is_im: boolean;
  is_channel: boolean;
  is_group: boolean;
  is_mpim: boolean;
  /** The other member of an IM. */
  user?: string;
  /** False: the bot was never invited (or was removed): posting answers `not_in_channel`. Default true. */
  is_member?: boolean;
  /** Archived: posting answers `is_archived`. */
  is_archived?: boolean;
}

/** Guesses the conversation kind from Slack's ID prefixes: C… channel, G… private, D… IM. */
export function inferChannel(id: string, extra: Partial<ChannelInfo> = {}): ChannelInfo {
  const is_im = id.startsWith("D");
  const is_group = id.startsWith("G");
  return { id, is_im, is_channel: !is_im && !is_group, is_group, is_mpim: false, ...(!is_im && { name: id.toLowerCase() }), ...extra };
}

// Timestamps are microseconds since the epoch, printed like Slack's "1700000000.000100".
const TS_BASE = 1_700_000_000_000_000;
const TS_STEP = 100;

function parseTs(ts: string): number | null {
  const m = /^(\d{1,10})\.(\d{6})$/.exec(ts);
  return m ? Number(m[1]) * 1_000_000 + Number(m[2]) : null;
}
const formatTs = (micros: number) => `${Math.floor(micros / 1_000_000)}.${String(micros % 1_000_000).padStart(6, "0")}`;

export class State {
  /** Shared by calls, reactions, statuses, ephemerals and response posts so tests can order them. */
  seq = 0;
  /** Survives reset() so a ts is never reused within one fake. */
  private lastTs = TS_BASE;
  messages = new Map<string, StoredMessage>();
  /** Bot messages in posting order (chat.postMessage and chat.startStream). */
  posted: StoredMessage[] = [];
  ephemerals: Ephemeral[] = [];
  reactionLog: ReactionEntry[] = [];
  statuses: StatusEntry[] = [];
  suggestedPrompts: SuggestedPrompts[] = [];
  responses: ResponseUrlPost[] = [];
  channels = new Map<string, ChannelInfo>();
  statusError: string | null = null;

  nextTs(): string {
    this.lastTs += TS_STEP;
    return formatTs(this.lastTs);
  }

  /** Keeps later generated ts values above a ts chosen by a test. */
  noteTs(ts: string) {
    const micros = parseTs(ts);
    if (micros !== null && micros > this.lastTs) this.lastTs = micros;
  }

  find(channel: string, ts: string): StoredMessage | undefined {
    const m = this.messages.get(`${channel}/${ts}`);
    return m && !m.deleted ? m : undefined;
  }

  store(message: StoredMessage) {
    this.messages.set(`${message.channel}/${message.ts}`, message);
    if (!this.channels.has(message.channel)) this.channels.set(message.channel, inferChannel(message.channel));
  }

  reset() {
    this.messages.clear();
    this.posted = [];
    this.ephemerals = [];
    this.reactionLog = [];
    this.statuses = [];
    this.suggestedPrompts = [];
    this.responses = [];
    this.channels.clear();
    this.statusError = null;
  }
}

export function toPosted(m: StoredMessage): Posted {
  return {
    channel: m.channel,
    ts: m.ts,
    ...(m.thread_ts !== undefined && { thread_ts: m.thread_ts }),
    text: m.text,
    ...(m.blocks !== undefined && { blocks: m.blocks }),
    params: m.params,
    edits: m.edits,
    ...(m.deleted && { deleted: true as const }),
    ...(m.stream && { stream: m.stream.status }),
  };
}

export function toStreamed(m: StoredMessage & { stream: StreamRecord }): Streamed {
  const { stream } = m;
  return {
    channel: m.channel,
    ts: m.ts,
    ...(m.thread_ts !== undefined && { thread_ts: m.thread_ts }),
    text: m.text,
    ...(m.blocks !== undefined && { blocks: m.blocks }),
    status: stream.status,
    ...(stream.mode !== undefined && { mode: stream.mode }),
    ...(stream.recipient_user_id !== undefined && { recipient_user_id: stream.recipient_user_id }),
    ...(stream.recipient_team_id !== undefined && { recipient_team_id: stream.recipient_team_id }),
    updates: stream.updates.map((u) => ({ ...u })),
    params: m.params,
  };
}
