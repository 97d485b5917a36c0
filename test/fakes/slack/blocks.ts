// Block Kit validation for the Slack fake, strict where bots commonly go wrong
// (too many blocks, an over-long section, an empty text object, the markdown
// block's 12,000-character budget) and lenient elsewhere. Errors look like
// Slack's: `invalid_blocks_format` when `blocks` is not a JSON array, else
// `invalid_blocks` with `response_metadata.messages` naming the JSON pointer.

import { isRecord, SlackError, withMessages } from "./common.js";

export const MAX_BLOCKS = 50;
export const SECTION_TEXT_MAX = 3000;
export const SECTION_FIELD_MAX = 2000;
export const HEADER_TEXT_MAX = 150;
/** Per markdown block and cumulative over all markdown blocks of one message. */
export const MARKDOWN_MAX = 12000;

const KNOWN_TYPES = new Set([
  "actions",
  "alert",
  "card",
  "carousel",
  "container",
  "context",
  "context_actions",
  "data_table",
  "divider",
  "file",
  "header",
  "image",
  "input",
  "markdown",
  "rich_text",
  "section",
  "table",
  "task_card",
  "plan",
  "video",
]);

const invalid = (message: string, pointer: string) => withMessages("invalid_blocks", `[ERROR] ${message} [json-pointer:${pointer}]`);

function textObject(value: unknown, pointer: string, max: number, types: readonly string[] = ["plain_text", "mrkdwn"]) {
  if (!isRecord(value)) throw invalid("must be an object", pointer);
  if (typeof value.type !== "string" || !types.includes(value.type)) {
    throw invalid(`must be one of: ${types.join(", ")}`, `${pointer}/type`);
  }
  if (typeof value.text !== "string") throw invalid("missing required field: text", `${pointer}/text`);
  if (value.text.length === 0) throw invalid("must be more than 0 characters", `${pointer}/text`);
  if (value.text.length > max) throw invalid(`must be less than ${max + 1} characters`, `${pointer}/text`);
}

/** Throws the SlackError Slack would answer for `blocks` (already JSON-decoded if it was a string). */
export function validateBlocks(blocks: unknown): asserts blocks is Record<string, unknown>[] {
  if (!Array.isArray(blocks)) throw new SlackError("invalid_blocks_format");
  if (blocks.length > MAX_BLOCKS) throw invalid(`no more than ${MAX_BLOCKS} items allowed`, "/blocks");
  let markdownTotal = 0;
  blocks.forEach((block: unknown, i) => {
    const at = `/blocks/${i}`;
    if (!isRecord(block)) throw invalid("must be an object", at);
    if (typeof block.type !== "string") throw invalid("missing required field: type", `${at}/type`);
    if (!KNOWN_TYPES.has(block.type)) throw invalid(`unsupported type: ${block.type}`, `${at}/type`);
    if (block.block_id !== undefined && (typeof block.block_id !== "string" || block.block_id.length > 255)) {
      throw invalid("must be a string of at most 255 characters", `${at}/block_id`);
    }
    switch (block.type) {
      case "section": {
        if (block.text === undefined && block.fields === undefined) throw invalid("must provide either text or fields", at);
        if (block.text !== undefined) textObject(block.text, `${at}/text`, SECTION_TEXT_MAX);
        if (block.fields !== undefined) {
          if (!Array.isArray(block.fields)) throw invalid("must be an array", `${at}/fields`);
          if (block.fields.length > 10) throw invalid("no more than 10 items allowed", `${at}/fields`);
          block.fields.forEach((f: unknown, j) => textObject(f, `${at}/fields/${j}`, SECTION_FIELD_MAX));
        }
        break;
      }
      case "header":
        textObject(block.text, `${at}/text`, HEADER_TEXT_MAX, ["plain_text"]);
        break;
      case "markdown": {
        if (typeof block.text !== "string") throw invalid("missing required field: text", `${at}/text`);
        if (block.text.length === 0) throw invalid("must be more than 0 characters", `${at}/text`);
        if (block.text.length > MARKDOWN_MAX) throw invalid(`must be less than ${MARKDOWN_MAX + 1} characters`, `${at}/text`);
        markdownTotal += block.text.length;
        if (markdownTotal > MARKDOWN_MAX) {
          throw invalid(`cumulative length of markdown blocks must be less than ${MARKDOWN_MAX + 1} characters`, `${at}/text`);
        }
        break;
      }
      case "context":
        if (!Array.isArray(block.elements) || block.elements.length === 0) throw invalid("must provide at least 1 element", `${at}/elements`);
        if (block.elements.length > 10) throw invalid("no more than 10 items allowed", `${at}/elements`);
        break;
      case "actions":
        if (!Array.isArray(block.elements) || block.elements.length === 0) throw invalid("must provide at least 1 element", `${at}/elements`);
        if (block.elements.length > 25) throw invalid("no more than 25 items allowed", `${at}/elements`);
        break;
      case "rich_text":
        if (!Array.isArray(block.elements)) throw invalid("missing required field: elements", `${at}/elements`);
        break;
      case "image":
        if (typeof block.alt_text !== "string" || block.alt_text.length === 0) throw invalid("missing required field: alt_text", `${at}/alt_text`);
        if (typeof block.image_url !== "string" && !isRecord(block.slack_file)) throw invalid("must provide either image_url or slack_file", at);
        break;
      default:
        // divider and the rarer block types: accepted as given
        break;
    }
  });
}

/** The text Slack stores for a message posted with blocks and no `text`. */
export const BLOCKS_ONLY_TEXT = "This content can't be displayed.";
