// The OpenTelemetry GenAI semantic conventions as this gateway fills them in (semantic-conventions 1.45,
// https://opentelemetry.io/docs/specs/semconv/gen-ai/): span names, attributes, and — only when
// OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true — message contents in the conventions' JSON shapes.

import { createHmac } from "node:crypto";
import type { Attributes } from "@opentelemetry/api";
import type { ChatMessage, ModelRequest, ModelResponse } from "../llm/types.js";
import type { StackFrame } from "../runtime/frame.js";

export const PROVIDER = "anthropic";

/**
 * A session key identifies a chat, and so a person: traces carry a keyed hash of it (HMAC-SHA256 under the
 * deployment's SESSION_HASH_SECRET), never the key. A plain digest would not do: chat ids are small numbers, and
 * anyone who reads the traces could hash every `telegram:<id>` until one matches. Replicas with the same secret
 * give a chat the same hash, so its traces can be followed across them.
 */
export function sessionHasher(secret: string | Buffer): (sessionKey: string) => string {
  return (sessionKey) => createHmac("sha256", secret).update(sessionKey).digest("hex").slice(0, 16);
}

export function agentAttributes(frame: StackFrame, depth: number | undefined): Attributes {
  return {
    "gen_ai.operation.name": "invoke_agent",
    "gen_ai.provider.name": PROVIDER,
    "gen_ai.agent.name": frame.agentName,
    "gen_ai.agent.id": frame.frameId,
    "gen_ai.conversation.id": frame.agentSessionId,
    "gen_ai.request.model": frame.model,
    "switchboard.agent.type": frame.agentType,
    "switchboard.agent.mode": frame.mode,
    "switchboard.agent.depth": depth ?? frame.callChain.length,
  };
}

export function chatAttributes(request: ModelRequest): Attributes {
  return {
    "gen_ai.operation.name": "chat",
    "gen_ai.provider.name": PROVIDER,
    "gen_ai.system": PROVIDER,
    "gen_ai.request.model": request.model,
    ...(request.maxTokens !== undefined ? { "gen_ai.request.max_tokens": request.maxTokens } : {}),
    "gen_ai.request.stream": request.onText !== undefined,
  };
}

export function responseAttributes(request: ModelRequest, response: ModelResponse): Attributes {
  const u = response.usage;
  return {
    "gen_ai.response.model": response.model ?? request.model,
    ...(response.requestId ? { "switchboard.model.request_id": response.requestId } : {}),
    "gen_ai.usage.input_tokens": u.inputTokens,
    "gen_ai.usage.output_tokens": u.outputTokens,
    "gen_ai.usage.cache_read.input_tokens": u.cacheReadTokens ?? 0,
    "gen_ai.usage.cache_creation.input_tokens": u.cacheWriteTokens ?? 0,
    "gen_ai.response.finish_reasons": [response.stopReason ?? "unknown"],
    "switchboard.cost_usd": (u.costNanoUsd ?? 0) / 1e9,
  };
}

/** The request's messages and instructions, as gen_ai.input.messages / gen_ai.system_instructions want them. */
export function inputContent(request: ModelRequest): Attributes {
  const instructions = [request.system, request.volatileSystem].filter((s): s is string => !!s).map((content) => ({ type: "text", content }));
  return {
    "gen_ai.system_instructions": JSON.stringify(instructions),
    "gen_ai.input.messages": JSON.stringify(request.messages.map(message)),
  };
}

export function outputContent(response: ModelResponse): Attributes {
  const out = message({ role: "assistant", content: response.content });
  return { "gen_ai.output.messages": JSON.stringify([{ ...out, finish_reason: response.stopReason ?? "unknown" }]) };
}

function message(m: ChatMessage): { role: string; parts: unknown[] } {
  const parts = m.content.map((block) => {
    switch (block.type) {
      case "text":
        return { type: "text", content: block.text };
      case "tool_use":
        return { type: "tool_call", id: block.id, name: block.name, arguments: block.input };
      case "tool_result":
        return { type: "tool_call_response", id: block.tool_use_id, response: block.content };
      // Tools the API ran itself (web search): the call and what it found, without the encrypted page content.
      case "server_tool_use":
        return { type: "server_tool_call", id: block.id, name: block.name, arguments: block.input };
      case "web_search_tool_result":
        return {
          type: "server_tool_call_response",
          id: block.tool_use_id,
          response: Array.isArray(block.content) ? block.content.map((r) => ({ title: r.title, url: r.url })) : block.content,
        };
      // Files are named, never their contents (their bytes are no span's business).
      case "image":
        return { type: "image", mime_type: block.source.media_type };
      case "document":
        return { type: "document", title: block.title ?? null };
      case "file":
        return { type: "file", id: block.file_id, mime_type: block.mime };
    }
  });
  return { role: m.role, parts };
}

/** W3C traceparent of a span context (version 00). */
export function traceparentOf(ctx: { traceId: string; spanId: string; traceFlags: number }): string {
  return `00-${ctx.traceId}-${ctx.spanId}-${ctx.traceFlags.toString(16).padStart(2, "0")}`;
}

/** The span context in a traceparent; null for anything that is not one (stored data is never trusted blindly). */
export function parseTraceparent(value: string | undefined): { traceId: string; spanId: string; traceFlags: number; isRemote: boolean } | null {
  const m = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/.exec(value ?? "");
  if (!m || /^0+$/.test(m[1]!) || /^0+$/.test(m[2]!)) return null;
  return { traceId: m[1]!, spanId: m[2]!, traceFlags: parseInt(m[3]!, 16), isRemote: true };
}
