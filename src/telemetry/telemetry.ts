import { randomBytes } from "node:crypto";
import { performance } from "node:perf_hooks";
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Link, type Span, type SpanContext, type Tracer } from "@opentelemetry/api";
import { allowsTool } from "../catalog/tool-patterns.js";
import type { DeliveryOutcome, GatewayObserver } from "../gateway/observer.js";
import { providerOf } from "../gateway/session-key.js";
import { ModelError, type Model } from "../llm/model.js";
import type { ModelRequest, ModelResponse, ToolUseBlock } from "../llm/types.js";
import type { StackFrame } from "../runtime/frame.js";
import type { Attributes, ToolOutcome } from "../runtime/observer.js";
import { parseRunExternalId } from "../schedules/run-id.js";
import type { OutboundRecord, RequestRecord } from "../store/store.js";
import { agentAttributes, chatAttributes, inputContent, outputContent, parseTraceparent, responseAttributes, sessionHasher, traceparentOf } from "./genai.js";
import type { Metrics } from "./metrics.js";

export interface TelemetryOptions {
  /** Null: no metrics (tests of tracing alone). */
  metrics: Metrics | null;
  /** Null: tracing is off (no OTEL_EXPORTER_OTLP_*ENDPOINT); no span is ever made. */
  tracer: Tracer | null;
  /** OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true: spans carry messages and tool arguments. */
  captureContent: boolean;
  /** What a span says a request's session was (sessionHasher(SESSION_HASH_SECRET)); unset: keyed by a random secret. */
  sessionHash?: (sessionKey: string) => string;
  /**
   * Whether a tool of that name exists now (MCP tools come and go). A frame's `mcp__<server>__*` pattern covers any
   * name the model makes up under it; only tools that exist become metric labels. Default: every allowed name.
   */
  knownTool?(name: string): boolean;
  /**
   * Where in the traces a scheduled job was made (its stored traceparent), for the link from each of its runs' spans
   * to the task that scheduled it. Unset, or null: no link.
   */
  scheduledBy?(jobId: string): Promise<string | null>;
}

/** The request a session is running here: its span, its agents' and tools' spans, and what the metrics need. */
interface RequestScope {
  span: Span | null;
  modelSeconds: number;
  /** Open invoke_agent spans by frame id: the parent of that frame's model and tool calls. */
  frames: Map<string, Span>;
  /** execute_tool spans by tool_use id: the parent of the child a tool hands to (use_skill, call_agent). */
  tools: Map<string, Span>;
}

/** Ended request spans kept for deliveries that come later (a retry): bounded, oldest dropped first. */
const RECENT = 1000;

/**
 * Turns what the gateway and runtime report into OpenTelemetry spans (GenAI conventions) and Prometheus metrics.
 * Spans are parented explicitly (request → invoke_agent → chat / execute_tool → invoke_agent of the child a tool
 * handed to), found by the session each report names: no async context, whose promise hooks would slow every
 * await in the process.
 */
export class Telemetry implements GatewayObserver {
  /** The turn each session is running here (commands answered beside a turn are not one). */
  private readonly sessions = new Map<string, RequestScope>();
  /** Open request spans by request id, for deliveries. */
  private readonly open = new Map<string, Span>();
  private readonly recent = new Map<string, SpanContext>();
  private readonly sessionHash: (sessionKey: string) => string;

  constructor(private readonly options: TelemetryOptions) {
    this.sessionHash = options.sessionHash ?? sessionHasher(randomBytes(32));
  }

  inbound(provider: string): void {
    this.options.metrics?.inbound.add(1, provider);
  }

  flooded(provider: string): void {
    this.options.metrics?.floodDropped.inc({ provider });
  }

  /** A message or a model call refused over a daily quota. */
  quotaRefused(limit: string, place: string): void {
    this.options.metrics?.quotaRefusals.inc({ limit, place });
  }

  async request<T>(request: RequestRecord, run: () => Promise<T>): Promise<T> {
    const { tracer, metrics } = this.options;
    const provider = providerOf(request.sessionKey);
    const started = performance.now();
    const links = tracer ? await this.scheduledByLinks(request.externalId) : [];
    const span =
      tracer?.startSpan(
        `request ${provider}`,
        {
          kind: SpanKind.SERVER,
          root: true,
          links,
          attributes: {
            "switchboard.provider": provider,
            "switchboard.session.key_hash": this.sessionHash(request.sessionKey),
            "switchboard.request.id": request.id,
            "switchboard.request.kind": request.kind,
            ...(request.taskId ? { "switchboard.task.id": request.taskId } : {}),
            ...scheduledRunAttributes(request.externalId),
          },
        },
        ROOT_CONTEXT,
      ) ?? null;
    const scope: RequestScope = { span, modelSeconds: 0, frames: new Map(), tools: new Map() };
    // A command (/status beside a turn) never runs agents: the session's turn keeps its scope.
    const turn = request.kind !== "command";
    if (turn) this.sessions.set(request.sessionKey, scope);
    if (span) this.open.set(request.id, span);
    if (request.kind === "approval") span?.addEvent("switchboard.approval.decided", { "switchboard.request.id": request.id });
    try {
      return await run();
    } catch (error) {
      span?.recordException(error as Error);
      span?.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
      throw error;
    } finally {
      if (turn && this.sessions.get(request.sessionKey) === scope) this.sessions.delete(request.sessionKey);
      const seconds = (performance.now() - started) / 1000;
      metrics?.turnDuration.observe({ provider, kind: request.kind }, seconds);
      metrics?.overhead.observe({ provider }, Math.max(0, seconds - scope.modelSeconds));
      if (span) {
        this.open.delete(request.id);
        this.remember(request.id, span.spanContext());
        span.end();
      }
    }
  }

  /** A scheduled run's span links to the span of the task that scheduled its job (given at the start, for samplers). */
  private async scheduledByLinks(externalId: string): Promise<Link[]> {
    const run = parseRunExternalId(externalId);
    if (!run || !this.options.scheduledBy) return [];
    // A trace without the link is better than no trace: a failed read leaves it out.
    const origin = parseTraceparent((await this.options.scheduledBy(run.jobId).catch(() => null)) ?? undefined);
    return origin ? [{ context: origin, attributes: { "switchboard.link": "scheduled_by", "switchboard.schedule.job_id": run.jobId } }] : [];
  }

  async agentTurn<T>(sessionKey: string, frame: StackFrame, depth: number | undefined, run: () => Promise<T>): Promise<T> {
    const tracer = this.options.tracer;
    const scope = this.sessions.get(sessionKey);
    if (!tracer || !scope) return run();
    const parent = (frame.parentToolUseId && scope.tools.get(frame.parentToolUseId)) || scope.span;
    const span = tracer.startSpan(`invoke_agent ${frame.agentName}`, { kind: SpanKind.INTERNAL, attributes: agentAttributes(frame, depth) }, context(parent));
    scope.frames.set(frame.frameId, span);
    try {
      const result = await run();
      const action = (result as { action?: unknown } | null)?.action;
      if (typeof action === "string") span.setAttribute("switchboard.turn.result", action);
      return result;
    } catch (error) {
      span.recordException(error as Error);
      span.setStatus({ code: SpanStatusCode.ERROR });
      throw error;
    } finally {
      if (scope.frames.get(frame.frameId) === span) scope.frames.delete(frame.frameId);
      span.end();
    }
  }

  async toolCall<T>(sessionKey: string, frame: StackFrame, use: ToolUseBlock, run: () => Promise<T>, outcome: (result: T) => ToolOutcome): Promise<T> {
    // A name the model made up is not a label: one metric series per invented name would be a memory leak.
    const tool = allowsTool(frame.effectiveTools, use.name) && (this.options.knownTool?.(use.name) ?? true) ? use.name : "unknown";
    const scope = this.options.tracer ? this.sessions.get(sessionKey) : undefined;
    const span = scope ? this.toolSpan(scope, frame, use, tool) : null;
    let how: ToolOutcome = "error";
    try {
      const result = await run();
      how = outcome(result);
      return result;
    } catch (error) {
      span?.recordException(error as Error);
      throw error;
    } finally {
      this.options.metrics?.toolCalls.add(1, tool, how);
      span?.setAttribute("switchboard.tool.outcome", how);
      if (how === "error") span?.setStatus({ code: SpanStatusCode.ERROR });
      span?.end();
    }
  }

  modelCall(sessionKey: string, frame: StackFrame, request: ModelRequest, run: () => Promise<ModelResponse>): Promise<ModelResponse> {
    const scope = this.sessions.get(sessionKey) ?? null;
    return this.chat(request, run, scope, scope ? (scope.frames.get(frame.frameId) ?? scope.span) : null);
  }

  event(sessionKey: string, name: string, attributes: Attributes): void {
    const span = this.sessions.get(sessionKey)?.span;
    if (!span) return;
    span.addEvent(name, attributes);
    if (name === "switchboard.task.failed") span.setStatus({ code: SpanStatusCode.ERROR, message: String(attributes["error.message"] ?? "") });
  }

  task(sessionKey: string, taskId: string, traceparent: string | undefined): void {
    const span = this.sessions.get(sessionKey)?.span;
    if (!span) return;
    span.setAttribute("switchboard.task.id", taskId);
    const first = parseTraceparent(traceparent);
    // Each request is a trace of its own; the task's first request is linked, so a task can be followed end to end.
    if (first && first.traceId !== span.spanContext().traceId)
      span.addLink({ context: first, attributes: { "switchboard.link": "task_start", "switchboard.task.id": taskId } });
  }

  traceparent(sessionKey: string): string | undefined {
    const span = this.sessions.get(sessionKey)?.span;
    return span ? traceparentOf(span.spanContext()) : undefined;
  }

  delivered(out: OutboundRecord, outcome: DeliveryOutcome): void {
    const provider = providerOf(out.sessionKey);
    if (outcome === "sent") this.options.metrics?.outbound.add(1, provider, out.kind);
    else this.options.metrics?.deliveryFailures.inc({ provider, outcome });
    const tracer = this.options.tracer;
    if (!tracer) return;
    const attributes = { "switchboard.outbound.id": out.id, "switchboard.outbound.kind": out.kind, "switchboard.delivery.outcome": outcome };
    const open = out.requestId ? this.open.get(out.requestId) : undefined;
    if (open) return void open.addEvent("switchboard.delivery", attributes);
    // Delivered after its request's span ended (a retry, another replica's reply): a short span in that trace.
    const ended = out.requestId ? this.recent.get(out.requestId) : undefined;
    const span = tracer.startSpan(`deliver ${provider}`, { kind: SpanKind.PRODUCER }, ended ? trace.setSpanContext(ROOT_CONTEXT, ended) : ROOT_CONTEXT);
    span.addEvent("switchboard.delivery", attributes);
    span.end();
  }

  /** A model used outside any request (memory extraction): each call timed, counted and traced as a root `chat` span. */
  instrument(model: Model): Model {
    const chat = (request: ModelRequest) => this.chat(request, () => model.complete(request), null, null);
    return {
      get configured() {
        return model.configured;
      },
      get setupHint() {
        return model.setupHint;
      },
      get defaultModel() {
        return model.defaultModel;
      },
      contextLimit: (name) => model.contextLimit(name),
      complete: chat,
    };
  }

  private toolSpan(scope: RequestScope, frame: StackFrame, use: ToolUseBlock, tool: string): Span {
    const span = this.options.tracer!.startSpan(
      `execute_tool ${tool}`,
      {
        kind: SpanKind.INTERNAL,
        attributes: {
          "gen_ai.operation.name": "execute_tool",
          "gen_ai.tool.name": use.name.slice(0, 128),
          "gen_ai.tool.call.id": use.id,
          "gen_ai.tool.type": "function",
          "gen_ai.agent.name": frame.agentName,
          ...(this.options.captureContent ? { "gen_ai.tool.call.arguments": JSON.stringify(use.input) } : {}),
        },
      },
      context(scope.frames.get(frame.frameId) ?? scope.span),
    );
    // Kept after the call: the child it handed to (use_skill) runs in a later turn of the loop, under this span.
    scope.tools.set(use.id, span);
    return span;
  }

  private async chat(request: ModelRequest, run: () => Promise<ModelResponse>, scope: RequestScope | null, parent: Span | null): Promise<ModelResponse> {
    const { tracer, metrics, captureContent } = this.options;
    const span =
      tracer?.startSpan(
        `chat ${request.model}`,
        { kind: SpanKind.CLIENT, attributes: { ...chatAttributes(request), ...(captureContent ? inputContent(request) : {}) } },
        context(parent),
      ) ?? null;
    const started = performance.now();
    let outcome = "error";
    try {
      const response = await run();
      outcome = "ok";
      span?.setAttributes({ ...responseAttributes(request, response), ...(captureContent ? outputContent(response) : {}) });
      const u = response.usage;
      if (metrics) {
        // The model that answered: a fallback's tokens are its own, at its own price.
        const model = response.model ?? request.model;
        metrics.tokens.add(u.inputTokens, model, "input");
        metrics.tokens.add(u.outputTokens, model, "output");
        metrics.tokens.add(u.cacheReadTokens ?? 0, model, "cache_read");
        metrics.tokens.add(u.cacheWriteTokens ?? 0, model, "cache_write");
        metrics.cost.add((u.costNanoUsd ?? 0) / 1e9, model);
      }
      return response;
    } catch (error) {
      outcome = error instanceof ModelError && error.aborted ? "cancelled" : "error";
      span?.setAttribute("error.type", error instanceof ModelError && error.status ? String(error.status) : outcome);
      span?.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
      throw error;
    } finally {
      const seconds = (performance.now() - started) / 1000;
      if (scope) scope.modelSeconds += seconds;
      metrics?.modelCalls.add(1, request.model, outcome);
      metrics?.modelCallDuration.observe({ model: request.model }, seconds);
      span?.end();
    }
  }

  private remember(requestId: string, ctx: SpanContext): void {
    this.recent.set(requestId, ctx);
    if (this.recent.size > RECENT) this.recent.delete(this.recent.keys().next().value!);
  }
}

function context(parent: Span | null) {
  return parent ? trace.setSpan(ROOT_CONTEXT, parent) : ROOT_CONTEXT;
}

/** A scheduled run's job and due time, so a trace finds the job (and through it the task that scheduled it). */
function scheduledRunAttributes(externalId: string): Record<string, string> {
  const run = parseRunExternalId(externalId);
  return run ? { "switchboard.schedule.job_id": run.jobId, "switchboard.schedule.due": new Date(run.due).toISOString() } : {};
}
