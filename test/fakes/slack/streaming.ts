// chat.startStream, chat.appendStream and chat.stopStream: a bot message in a thread whose text grows while it
// streams and is final once stopped. Every accepted call is recorded with the text a reader saw after it
// (FakeSlack.streams()), so a test can tell partial text was visible before the end and the end is exact.
//
// Sources (rules below name theirs):
// [ref]  docs.slack.dev/reference/methods/chat.startStream, chat.appendStream, chat.stopStream: arguments, usage,
//        the chunk objects (markdown_text, task_update, plan_update, blocks), tiers 2 / 4 / 2.
// [spec] the machine-readable copies of those pages: slack-ruby/slack-api-ref methods/chat/chat.*Stream.json and
//        smstoslack/slack_kit priv/docs/methods/chat.*Stream.json: which arguments are required, the error names.
// [sdk]  @slack/web-api 8.2.0 dist/chat-stream.js (what client.chatStream() sends: every flush as `chunks` of
//        {type: "markdown_text"}; stop() may start a stream with neither markdown_text nor chunks, and sends
//        `chunks: []` when nothing is buffered).
//
// ASSUMPTIONS, where the stored reference says nothing (each is marked where it is applied):
// (a) a missing thread_ts or ts answers invalid_arguments "[ERROR] missing required field: …", as Slack's newer
//     methods do (assistant.threads.setStatus);
// (b) a thread_ts that is no message of the channel answers thread_not_found (chat.postMessage's name; the
//     startStream list names nothing for it);
// (c) markdown_text, or one markdown_text chunk, over 12,000 characters answers msg_too_long; the whole streamed
//     text has no limit here;
// (d) a stream started with no content takes its mode from the first call that has some; empty `chunks` carry none
//     (an error in appendStream, nothing in stopStream);
// (e) recipient ids are required in every conversation that is not an IM; their values are not checked; the team
//     id is checked first;
// (f) after a user's Stop, appendStream answers stopped_by_user and stopStream message_not_in_streaming_state;
//     after expiry both answer message_not_in_streaming_state;
// (g) invalid_chunks and msg_blocks_too_many (documented names) carry Slack's usual "[ERROR] … [json-pointer:…]"
//     message; `blocks` chunks count against one 50-block budget per message.

import { MAX_BLOCKS, validateBlocks } from "./blocks.js";
import { isRecord, optString, SlackError, withMessages, type Params } from "./common.js";
import { BOT_ID, BOT_USER_ID, messageJson, postable, requireChannel, type Handler } from "./methods.js";
import { inferChannel, type State, type StoredMessage, type StreamRecord, type StreamUpdate } from "./state.js";

/** [ref] markdown_text: "Limit this field to 12,000 characters." */
export const STREAM_MARKDOWN_MAX = 12_000;
const TASK_STATUSES = ["pending", "in_progress", "complete", "error"];

type StreamedMessage = StoredMessage & { stream: StreamRecord };

/** What one call adds: its mode (undefined when it carries nothing), markdown, chunks and blocks chunks' blocks. */
interface Content {
  mode?: "markdown_text" | "chunks";
  markdown: string;
  chunks: unknown[];
  blocks: unknown[];
}

// (a)
const missing = (field: string) => withMessages("invalid_arguments", `[ERROR] missing required field: ${field}`);
// (g)
const badChunk = (message: string, pointer: string) => withMessages("invalid_chunks", `[ERROR] ${message} [json-pointer:${pointer}]`);

function checkMarkdown(text: string) {
  if (text.length > STREAM_MARKDOWN_MAX) throw new SlackError("msg_too_long"); // (c)
}

/** [ref] the chunk objects; throws invalid_chunks (or invalid_blocks inside a blocks chunk) like Slack. */
function readChunks(value: unknown): Record<string, unknown>[] {
  if (!Array.isArray(value)) throw badChunk("must be an array", "/chunks");
  return value.map((chunk: unknown, i) => {
    const at = `/chunks/${i}`;
    if (!isRecord(chunk)) throw badChunk("must be an object", at);
    const text = (field: string) => {
      if (typeof chunk[field] !== "string" || chunk[field] === "") throw badChunk(`missing required field: ${field}`, `${at}/${field}`);
    };
    switch (chunk.type) {
      case "markdown_text":
        if (typeof chunk.text !== "string") throw badChunk("missing required field: text", `${at}/text`);
        checkMarkdown(chunk.text);
        break;
      case "task_update":
        text("id");
        text("title");
        if (typeof chunk.status !== "string" || !TASK_STATUSES.includes(chunk.status)) {
          throw badChunk(`must be one of: ${TASK_STATUSES.join(", ")}`, `${at}/status`);
        }
        break;
      case "plan_update":
        text("title");
        break;
      case "blocks":
        if (!Array.isArray(chunk.blocks)) throw badChunk("missing required field: blocks", `${at}/blocks`);
        validateBlocks(chunk.blocks);
        break;
      default:
        throw badChunk(`unsupported type: ${String(chunk.type)}`, `${at}/type`);
    }
    return chunk;
  });
}

/** markdown_text or chunks of one call. [spec] both at once: cannot_provide_both_markdown_text_and_chunks. */
function readContent(params: Params, required: boolean): Content {
  const markdown = optString(params, "markdown_text");
  const hasChunks = params.chunks !== undefined && params.chunks !== null && params.chunks !== "";
  if (markdown !== undefined && hasChunks) throw new SlackError("cannot_provide_both_markdown_text_and_chunks");
  if (markdown !== undefined) {
    checkMarkdown(markdown);
    return { mode: "markdown_text", markdown, chunks: [], blocks: [] };
  }
  const chunks = hasChunks ? readChunks(params.chunks) : [];
  if (chunks.length > 0) {
    return {
      mode: "chunks",
      markdown: chunks.map((c) => (c.type === "markdown_text" ? (c.text as string) : "")).join(""),
      chunks,
      blocks: chunks.flatMap((c) => (c.type === "blocks" ? (c.blocks as unknown[]) : [])),
    };
  }
  // [spec] appendStream: markdown_text_or_chunks_required; (d) empty chunks count as none.
  if (required) throw new SlackError("markdown_text_or_chunks_required");
  return { markdown: "", chunks: [], blocks: [] };
}

/** The required channel and ts of appendStream / stopStream. */
function channelAndTs(params: Params): { channel: string; ts: string } {
  const channel = requireChannel(params);
  const ts = optString(params, "ts");
  if (ts === undefined) throw missing("ts");
  return { channel, ts };
}

/** [spec] appendStream / stopStream refusals for the message named by channel + ts. */
function streamingMessage(state: State, channel: string, ts: string, method: StreamUpdate["method"]): StreamedMessage {
  postable(state, channel); // [spec] is_archived, not_in_channel
  const message = state.find(channel, ts);
  if (!message) throw new SlackError("message_not_found");
  if (message.bot_id === undefined) throw new SlackError("message_not_owned_by_app");
  const { stream } = message;
  if (stream?.status !== "streaming") {
    if (stream?.status === "stopped_by_user" && method === "chat.appendStream") throw new SlackError("stopped_by_user"); // (f)
    throw new SlackError("message_not_in_streaming_state");
  }
  return message as StreamedMessage;
}

/** Checks, then applies, one call's content (and stopStream's final blocks); records the text it left visible. */
function apply(message: StreamedMessage, method: StreamUpdate["method"], content: Content, seq: number, finalBlocks: unknown[] = []) {
  const { stream } = message;
  if (content.mode !== undefined && stream.mode !== undefined && content.mode !== stream.mode) {
    throw new SlackError("streaming_mode_mismatch"); // [spec] "If you started the stream with `markdown_text`, you must append with `markdown_text`"
  }
  // [ref] stopStream: 50 `blocks`, "a separate limit from the `blocks` sent via the `chunks` parameter" (g)
  if (stream.chunkBlocks.length + content.blocks.length > MAX_BLOCKS) throw new SlackError("msg_blocks_too_many");
  if (content.mode !== undefined) stream.mode = content.mode;
  stream.chunkBlocks.push(...content.blocks);
  message.text += content.markdown;
  // [ref] stopStream: blocks "will be rendered after anything passed via `chunks` or `markdown_text`"
  const blocks = [...stream.chunkBlocks, ...finalBlocks];
  if (blocks.length > 0) message.blocks = blocks;
  stream.updates.push({ method, markdown: content.markdown, chunks: content.chunks, text: message.text, seq });
}

export const STREAM_METHODS: Record<string, Handler> = {
  "chat.startStream": (state, params, seq) => {
    const channel = requireChannel(params);
    const threadTs = optString(params, "thread_ts");
    if (threadTs === undefined) throw missing("thread_ts"); // [spec] required; (a)
    postable(state, channel);
    // [ref] recipient_user_id / recipient_team_id: "Required when streaming to channels." (e)
    const recipient_team_id = optString(params, "recipient_team_id");
    const recipient_user_id = optString(params, "recipient_user_id");
    if (!(state.channels.get(channel) ?? inferChannel(channel)).is_im) {
      if (recipient_team_id === undefined) throw new SlackError("missing_recipient_team_id");
      if (recipient_user_id === undefined) throw new SlackError("missing_recipient_user_id");
    }
    const content = readContent(params, false); // [ref] markdown_text and chunks are both optional here
    const parent = state.find(channel, threadTs);
    if (!parent) throw new SlackError("thread_not_found"); // (b)
    const message: StreamedMessage = {
      channel,
      ts: state.nextTs(),
      thread_ts: parent.thread_ts ?? parent.ts,
      user: BOT_USER_ID,
      bot_id: BOT_ID,
      text: "",
      params,
      edits: 0,
      deleted: false,
      reactions: [],
      stream: {
        status: "streaming",
        ...(recipient_user_id !== undefined && { recipient_user_id }),
        ...(recipient_team_id !== undefined && { recipient_team_id }),
        chunkBlocks: [],
        updates: [],
      },
    };
    apply(message, "chat.startStream", content, seq);
    state.store(message);
    state.posted.push(message);
    return { channel, ts: message.ts }; // [spec] response example
  },

  "chat.appendStream": (state, params, seq) => {
    const { channel, ts } = channelAndTs(params);
    const content = readContent(params, true);
    const message = streamingMessage(state, channel, ts, "chat.appendStream");
    apply(message, "chat.appendStream", content, seq);
    return { channel, ts }; // [spec] response example
  },

  "chat.stopStream": (state, params, seq) => {
    const { channel, ts } = channelAndTs(params);
    const content = readContent(params, false);
    const blocks = params.blocks === undefined || params.blocks === "" ? [] : params.blocks;
    if (Array.isArray(blocks) && blocks.length > MAX_BLOCKS) throw new SlackError("msg_blocks_too_many"); // [spec] (g)
    validateBlocks(blocks);
    checkMetadata(params.metadata);
    const message = streamingMessage(state, channel, ts, "chat.stopStream");
    apply(message, "chat.stopStream", content, seq, blocks);
    message.stream.status = "stopped";
    return { channel, ts, message: messageJson(message) }; // [spec] response example: the final message
  },
};

/** [spec] invalid_metadata_format / invalid_metadata_schema; which failure gets which name is assumed. */
function checkMetadata(metadata: unknown) {
  if (metadata === undefined || metadata === "") return;
  if (!isRecord(metadata)) throw new SlackError("invalid_metadata_format");
  if (typeof metadata.event_type !== "string" || !isRecord(metadata.event_payload)) throw new SlackError("invalid_metadata_schema");
}

/** Ends a stream the way Slack can without the app (a user's Stop, expiry); throws if `ts` is not streaming. */
export function endStream(state: State, channel: string, ts: string, how: "stopped_by_user" | "expired") {
  const message = state.find(channel, ts);
  if (message?.stream?.status !== "streaming") throw new Error(`fake Slack: ${channel}/${ts} is not a message that is streaming`);
  message.stream.status = how;
}
