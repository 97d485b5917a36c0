import Anthropic from "@anthropic-ai/sdk";
import { toModelError } from "./failures.js";
import { ModelError, type Model } from "./model.js";
import { PriceTable } from "./prices.js";
import type { AssistantBlock, ModelRequest, ModelResponse } from "./types.js";

export const DEFAULT_MODEL = "claude-sonnet-5-5";
export const DEFAULT_MAX_TOKENS = 4096;

export interface AnthropicModelOptions {
  apiKey: string;
  baseURL?: string | undefined;
  defaultModel?: string;
  maxTokens?: number;
  maxRetries?: number;
  timeoutMs?: number;
  /** Prices each call's usage (defaults plus MODEL_PRICES). */
  prices?: PriceTable;
  /** The time a `retry-after` date is read against. Default: the system clock. */
  now?: () => number;
}

/**
 * The Model backed by the Messages API through the official SDK, with one API key. The SDK retries 429/5xx itself
 * unless `maxRetries` is 0, as it is under the resilient model (resilient.ts), which retries, rotates keys and falls
 * back to other models itself.
 */
export class AnthropicModel implements Model {
  readonly configured = true;
  readonly setupHint = "";
  readonly defaultModel: string;
  private readonly client: Anthropic;
  private readonly maxTokens: number;
  private readonly limits = new Map<string, Promise<number | null>>();
  private readonly prices: PriceTable;
  private readonly now: () => number;

  constructor(options: AnthropicModelOptions) {
    this.defaultModel = options.defaultModel ?? DEFAULT_MODEL;
    this.maxTokens = options.maxTokens ?? DEFAULT_MAX_TOKENS;
    this.prices = options.prices ?? new PriceTable();
    this.now = options.now ?? Date.now;
    this.client = new Anthropic({
      apiKey: options.apiKey,
      // undefined would make the SDK read ANTHROPIC_BASE_URL itself; config already did that.
      baseURL: options.baseURL ?? null,
      maxRetries: options.maxRetries ?? 2,
      timeout: options.timeoutMs ?? 10 * 60 * 1000,
    });
  }

  async complete(request: ModelRequest): Promise<ModelResponse> {
    const params = {
      model: request.model,
      max_tokens: request.maxTokens ?? this.maxTokens,
      ...systemBlocks(request),
      // The history's blocks are the API's own shapes (the server tools' blocks as the API sent them), typed more loosely.
      messages: request.messages as unknown as Anthropic.MessageParam[],
      // The tools and the system prompt form the stable prefix: cache it for long chats.
      ...(request.tools.length > 0
        ? { tools: request.tools.map((t, i) => (i === request.tools.length - 1 ? { ...t, cache_control: { type: "ephemeral" as const } } : t)) }
        : {}),
      ...(request.toolChoice ? { tool_choice: { type: "tool" as const, name: request.toolChoice.name } } : {}),
    };
    // Once the answer began to arrive, an error the SDK does not name is the connection dropping mid-answer.
    let streamed = false;
    try {
      let response: Anthropic.Message;
      if (request.onText) {
        // Streamed: each text delta goes out as it arrives; the final message is the same as create() returns.
        const stream = this.client.messages.stream(params, { signal: request.signal });
        stream.on("connect", () => void (streamed = true));
        const onText = request.onText;
        stream.on("text", (delta) => {
          try {
            onText(delta);
          } catch {
            // a preview that cannot be shown changes nothing about the reply
          }
        });
        response = await stream.finalMessage();
        (response as { _request_id?: string | null })._request_id ??= stream.request_id ?? null;
      } else {
        response = await this.client.messages.create(params, { signal: request.signal });
      }
      const content = assistantBlocks(response.content);
      const searches = response.usage.server_tool_use?.web_search_requests ?? 0;
      const usage = {
        inputTokens: response.usage.input_tokens,
        outputTokens: response.usage.output_tokens,
        cacheReadTokens: response.usage.cache_read_input_tokens ?? 0,
        cacheWriteTokens: response.usage.cache_creation_input_tokens ?? 0,
        ...(searches > 0 ? { webSearchRequests: searches } : {}),
      };
      // Priced as the model that answered; an unknown answering id falls back to the requested one's price.
      const priced = this.prices.known(response.model) ? response.model : request.model;
      return {
        content,
        stopReason: response.stop_reason,
        usage: { ...usage, costNanoUsd: this.prices.costNanoUsd(priced, usage) },
        requestId: (response as { _request_id?: string | null })._request_id ?? null,
        model: response.model ?? null,
      };
    } catch (error) {
      throw toModelError(error, { streamed, now: this.now() });
    }
  }

  /** Asks the Models API once per model for max_input_tokens; null when it cannot say. */
  contextLimit(model: string): Promise<number | null> {
    let limit = this.limits.get(model);
    if (!limit) {
      limit = this.client.models
        .retrieve(model)
        .then((info) => info.max_input_tokens ?? null)
        .catch(() => null);
      this.limits.set(model, limit);
    }
    return limit;
  }
}

/**
 * The reply's blocks as the history keeps them: text (with its citations), tool calls, and the web search tool's calls
 * and results, which must be sent back exactly as they came. Other block types are not requested and are dropped.
 */
function assistantBlocks(blocks: readonly Anthropic.ContentBlock[]): AssistantBlock[] {
  const content: AssistantBlock[] = [];
  for (const block of blocks) {
    switch (block.type) {
      case "text": {
        if (block.text.trim() === "") break;
        const citations = (block.citations ?? []).filter((c): c is Anthropic.CitationsWebSearchResultLocation => c.type === "web_search_result_location");
        content.push({
          type: "text",
          text: block.text,
          ...(citations.length > 0
            ? { citations: citations.map(({ type, url, title, cited_text, encrypted_index }) => ({ type, url, title, cited_text, encrypted_index })) }
            : {}),
        });
        break;
      }
      case "tool_use":
        content.push({ type: "tool_use", id: block.id, name: block.name, input: isRecord(block.input) ? block.input : {} });
        break;
      case "server_tool_use":
        // Only web search is ever offered; another server tool's call would have no result type to keep.
        if (block.name !== "web_search") break;
        content.push({ type: "server_tool_use", id: block.id, name: "web_search", input: isRecord(block.input) ? block.input : {} });
        break;
      case "web_search_tool_result":
        content.push({
          type: "web_search_tool_result",
          tool_use_id: block.tool_use_id,
          content: Array.isArray(block.content)
            ? block.content.map(({ type, url, title, encrypted_content, page_age }) => ({ type, url, title, encrypted_content, page_age }))
            : { type: block.content.type, error_code: block.content.error_code },
        });
        break;
      default:
        break;
    }
  }
  return content;
}

function systemBlocks(request: ModelRequest) {
  const blocks: Array<{ type: "text"; text: string; cache_control?: { type: "ephemeral" } }> = [];
  if (request.system) blocks.push({ type: "text", text: request.system, cache_control: { type: "ephemeral" } });
  if (request.volatileSystem) blocks.push({ type: "text", text: request.volatileSystem });
  return blocks.length ? { system: blocks } : {};
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Stands in when ANTHROPIC_API_KEY is missing, so the gateway starts and can tell users what to set. */
export class UnconfiguredModel implements Model {
  readonly configured = false;
  readonly setupHint = "The bot has no model configured yet: set ANTHROPIC_API_KEY in the environment (or .env) and restart it.";
  constructor(readonly defaultModel: string = DEFAULT_MODEL) {}
  complete(): Promise<ModelResponse> {
    return Promise.reject(new ModelError(this.setupHint));
  }
  contextLimit(): Promise<number | null> {
    return Promise.resolve(null);
  }
}
