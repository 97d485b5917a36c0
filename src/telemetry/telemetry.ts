import { AsyncLocalStorage } from "node:async_hooks";
import { performance } from "node:perf_hooks";
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Span, type SpanContext, type Tracer } from "@opentelemetry/api";
import type { DeliveryOutcome, GatewayObserver } from "../gateway/observer.js";
import { providerOf } from "../gateway/session-key.js";
import { ModelError, type Model } from "../llm/model.js";
import type { ModelRequest, ModelResponse, ToolUseBlock } from "../llm/types.js";
import type { StackFrame } from "../runtime/frame.js";
import type { Attributes, ToolOutcome } from "../runtime/observer.js";
import type { OutboundRecord, RequestRecord } from "../store/store.js";
import { agentAttributes, chatAttributes, inputContent, keyHash, outputContent, parseTraceparent, responseAttributes, traceparentOf } from "./genai.js";
import type { Metrics } from "./metrics.js";

export interface TelemetryOptions {
  /** Null: no metrics (tests of tracing alone). */
  metrics: Metrics | null;
  /** Null: tracing is off (no OTEL_EXPORTER_OTLP_*ENDPOINT); no span is ever made. */
  tracer: Tracer | null;
  /** OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true: spans carry messages and tool arguments. */
  captureContent: boolean;
}

/** One request run here: its span, and what the metrics need at its end. */
interface RequestScope {
  span: Span | null;
  modelSeconds: number;
  /** Tool calls of this request that handed the chat to a child: the child's turn is traced under them. */
  handoffs: Map<string, Span>;
}

interface Scope {
  request: RequestScope;
  /** The innermost open span (request, invoke_agent or execute_tool): the parent of the next one. */
  span: Span | null;
}

/** Ended request spans kept for deliveries that come later (a retry): bounded, oldest dropped first. */
const RECENT = 1000;

/**
 * Turns what the gateway and runtime report into OpenTelemetry spans (GenAI conventions) and Prometheus metrics.
 * Spans are parented explicitly through this class's own async context, so the tree is right whatever else
 * runs in the process: request → invoke_agent → chat / execute_tool → invoke_agent (a child the tool handed to).
 */
export class Telemetry implements GatewayObserver {
  private readonly scopes = new AsyncLocalStorage<Scope>();
  private readonly open = new Map<string, Span>();
  private readonly recent = new Map<string, SpanContext>();

  constructor(private readonly options: TelemetryOptions) {}

  inbound(provider: string): void {
    this.options.metrics?.inbound.inc({ provider });
  }

  async request<T>(request: RequestRecord, run: () => Promise<T>): Promise<T> {
    const { tracer, metrics } = this.options;
    const provider = providerOf(request.sessionKey);
    const started = performance.now();
    const span =
      tracer?.startSpan(
        `request ${provider}`,
        {
          kind: SpanKind.SERVER,
          root: true,
          attributes: {
            "switchboard.provider": provider,
            "switchboard.session.key_hash": keyHash(request.sessionKey),
            "switchboard.request.id": request.id,
            "switchboard.request.kind": request.kind,
            ...(request.taskId ? { "switchboard.task.id": request.taskId } : {}),
          },
        },
        ROOT_CONTEXT,
      ) ?? null;
    const scope: Scope = { request: { span, modelSeconds: 0, handoffs: new Map() }, span };
    if (span) this.open.set(request.id, span);
    if (request.kind === "approval") span?.addEvent("switchboard.approval.decided", { "switchboard.request.id": request.id });
    try {
      return await this.scopes.run(scope, run);
    } catch (error) {
      span?.recordException(error as Error);
      span?.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
      throw error;
    } finally {
      const seconds = (performance.now() - started) / 1000;
      metrics?.turnDuration.observe({ provider, kind: request.kind }, seconds);
      metrics?.overhead.observe({ provider }, Math.max(0, seconds - scope.request.modelSeconds));
      if (span) {
        this.open.delete(request.id);
        this.remember(request.id, span.spanContext());
        span.end();
      }
    }
  }

  agentTurn<T>(frame: StackFrame, depth: number | undefined, run: () => Promise<T>): Promise<T> {
    const tracer = this.options.tracer;
    if (!tracer) return run();
    const scope = this.scope();
    const parent = (frame.parentToolUseId && scope.request.handoffs.get(frame.parentToolUseId)) || scope.span;
    const span = tracer.startSpan(`invoke_agent ${frame.agentName}`, { kind: SpanKind.INTERNAL, attributes: agentAttributes(frame, depth) }, context(parent));
    return this.within(scope, span, run, (result) => {
      const action = (result as { action?: unknown } | null)?.action;
      if (typeof action === "string") span.setAttribute("switchboard.turn.result", action);
    });
  }

  async toolCall<T>(frame: StackFrame, use: ToolUseBlock, run: () => Promise<T>, outcome: (result: T) => ToolOutcome): Promise<T> {
    // A name the model made up is not a label: one metric series per invented name would be a memory leak.
    const tool = frame.effectiveTools.includes(use.name) ? use.name : "unknown";
    const tracer = this.options.tracer;
    const scope = tracer ? this.scope() : null;
    const span =
      tracer?.startSpan(
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
        context(scope?.span ?? null),
      ) ?? null;
    let how: ToolOutcome = "error";
    try {
      const result = scope && span ? await this.scopes.run({ request: scope.request, span }, run) : await run();
      how = outcome(result);
      if (how === "handoff" && span) scope?.request.handoffs.set(use.id, span);
      return result;
    } catch (error) {
      span?.recordException(error as Error);
      throw error;
    } finally {
      this.options.metrics?.toolCalls.inc({ tool, outcome: how });
      span?.setAttribute("switchboard.tool.outcome", how);
      if (how === "error") span?.setStatus({ code: SpanStatusCode.ERROR });
      span?.end();
    }
  }

  event(name: string, attributes: Attributes): void {
    const scope = this.scopes.getStore();
    scope?.span?.addEvent(name, attributes);
    if (name === "switchboard.task.failed") scope?.request.span?.setStatus({ code: SpanStatusCode.ERROR, message: String(attributes["error.message"] ?? "") });
  }

  task(taskId: string, traceparent: string | undefined): void {
    const span = this.scopes.getStore()?.request.span;
    if (!span) return;
    span.setAttribute("switchboard.task.id", taskId);
    const first = parseTraceparent(traceparent);
    // Each request is a trace of its own; the task's first request is linked, so a task can be followed end to end.
    if (first && first.traceId !== span.spanContext().traceId) span.addLink({ context: first, attributes: { "switchboard.link": "task_start", "switchboard.task.id": taskId } });
  }

  traceparent(): string | undefined {
    const span = this.scopes.getStore()?.request.span;
    return span ? traceparentOf(span.spanContext()) : undefined;
  }

  delivered(out: OutboundRecord, outcome: DeliveryOutcome): void {
    const provider = providerOf(out.sessionKey);
    if (outcome === "sent") this.options.metrics?.outbound.inc({ provider, kind: out.kind });
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

  /** The model, with a `chat` span and the model metrics around each call (agents', compaction's, memory's). */
  instrument(model: Model): Model {
    const self = this;
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
      complete: (request) => self.chat(model, request),
    };
  }

  private async chat(model: Model, request: ModelRequest): Promise<ModelResponse> {
    const { tracer, metrics, captureContent } = this.options;
    const scope = this.scopes.getStore();
    const span =
      tracer?.startSpan(
        `chat ${request.model}`,
        { kind: SpanKind.CLIENT, attributes: { ...chatAttributes(request), ...(captureContent ? inputContent(request) : {}) } },
        context(scope?.span ?? null),
      ) ?? null;
    const started = performance.now();
    let outcome = "error";
    try {
      const response = await model.complete(request);
      outcome = "ok";
      span?.setAttributes({ ...responseAttributes(request, response), ...(captureContent ? outputContent(response) : {}) });
      const u = response.usage;
      if (metrics) {
        const labels = { model: request.model };
        metrics.tokens.inc({ ...labels, type: "input" }, u.inputTokens);
        metrics.tokens.inc({ ...labels, type: "output" }, u.outputTokens);
        metrics.tokens.inc({ ...labels, type: "cache_read" }, u.cacheReadTokens ?? 0);
        metrics.tokens.inc({ ...labels, type: "cache_write" }, u.cacheWriteTokens ?? 0);
        metrics.cost.inc(labels, (u.costNanoUsd ?? 0) / 1e9);
      }
      return response;
    } catch (error) {
      outcome = error instanceof ModelError && error.aborted ? "cancelled" : "error";
      span?.setAttribute("error.type", error instanceof ModelError && error.status ? String(error.status) : outcome);
      span?.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
      throw error;
    } finally {
      const seconds = (performance.now() - started) / 1000;
      if (scope) scope.request.modelSeconds += seconds;
      metrics?.modelCalls.inc({ model: request.model, outcome });
      metrics?.modelCallDuration.observe({ model: request.model }, seconds);
      span?.end();
    }
  }

  /** The current scope; outside any request (a background job), a detached one. */
  private scope(): Scope {
    return this.scopes.getStore() ?? { request: { span: null, modelSeconds: 0, handoffs: new Map() }, span: null };
  }

  private async within<T>(scope: Scope, span: Span, run: () => Promise<T>, done: (result: T) => void): Promise<T> {
    try {
      const result = await this.scopes.run({ request: scope.request, span }, run);
      done(result);
      return result;
    } catch (error) {
      span.recordException(error as Error);
      span.setStatus({ code: SpanStatusCode.ERROR });
      throw error;
    } finally {
      span.end();
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
