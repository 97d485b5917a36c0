import { AsyncLocalStorage } from "node:async_hooks";
import { ModelError, type Model } from "../../../src/llm/model.js";
import type { AssistantBlock, ModelRequest, ModelResponse } from "../../../src/llm/types.js";
import type { Tool } from "../../../src/runtime/tools/tool.js";
import { validateRequest } from "../../fakes/anthropic/validate.js";
import type { Prng } from "../prng.js";
import type { SimClock } from "./clock.js";
import type { PauseGate } from "./pause-gate.js";

/** The turn a model call or tool run belongs to (set around each orchestrated request). */
export const currentTurn = new AsyncLocalStorage<{ sessionKey: string; requestId: string }>();

/** What lives outside the processes: the booking service (a side effect) and what the chat platform showed. */
export interface Outside {
  /** Real runs per booking (the city the user named) and per tool call: each must stay ≤ 1. */
  bookings: Map<string, number>;
  runs: Map<string, number>;
  delivered: Array<{ replica: string; id: string; requestId: string | null; text: string }>;
}

/** State the replicas' models share: one conversation script, one tool-id counter, one budget. */
export interface ModelShared {
  prng: Prng;
  clock: SimClock;
  violations: string[];
  trace: (line: string) => void;
  toolIds: number;
  calls: number;
  /** Model calls made for a session whose lease the caller did not hold (wasted work after a takeover). */
  staleCalls: number;
  /** Above this many model calls in one scenario, something spins: the call never answers and it is reported. */
  maxCalls: number;
  /** Pauses and crashes that struck inside a call_agent callee (its model answer or its booking held). */
  midCall: number;
}

/** The researcher runs as a call_agent callee: it cannot talk to the user. */
export function inCallee(system: string): boolean {
  return system.includes('agent "researcher"');
}

/**
 * The scripted model of one replica. The answer depends only on the conversation (so a replica taking over
 * a turn gets the same next step): main hands "plan…" to the interview skill and answers anything else;
 * the skill asks "Where to?", books the city the user names with `ledger`, and completes; main then
 * confirms. Every request is first checked with the strict Messages API validator. Each call takes some
 * virtual time (lease renewals of running replicas fire meanwhile), then its answer passes the replica's
 * pause gate: a replica can freeze right after its model answered, before it handled the answer.
 */
export class ScriptedModel implements Model {
  readonly configured = true;
  readonly setupHint = "";
  readonly defaultModel = "claude-sim";

  constructor(
    private readonly replica: string,
    private readonly shared: ModelShared,
    private readonly gate: PauseGate,
    /** Whether the caller holds the live lease on the session (for the stale-call count). */
    private readonly holds: (sessionKey: string) => boolean,
  ) {}

  contextLimit(): Promise<number | null> {
    return Promise.resolve(null);
  }

  async complete(request: ModelRequest): Promise<ModelResponse> {
    const shared = this.shared;
    const turn = currentTurn.getStore();
    shared.calls++;
    if (turn && !this.holds(turn.sessionKey)) {
      shared.staleCalls++;
      shared.trace(`${this.replica} calls the model for ${turn.requestId} of ${turn.sessionKey} without holding its lease (wasted)`);
    }
    if (shared.calls > shared.maxCalls) {
      shared.violations.push(`no progress: more than ${shared.maxCalls} model calls (replica ${this.replica} on ${turn?.requestId ?? "?"}); something spins`);
      return new Promise(() => {});
    }
    const body = {
      model: request.model,
      max_tokens: 1024,
      system: request.system,
      messages: request.messages,
      ...(request.tools.length ? { tools: request.tools } : {}),
    };
    const invalid = validateRequest(JSON.parse(JSON.stringify(body)));
    if (invalid) {
      shared.violations.push(`model request rejected by the Messages API rules (replica ${this.replica}, ${turn?.requestId ?? "?"}): ${invalid.message}`);
      throw new ModelError(`Anthropic API error 400: ${invalid.message}`, 400);
    }
    shared.clock.tick(20 + shared.prng.int(80));
    const held = this.gate.wait("model");
    if (this.gate.state !== "running" && inCallee(request.system)) shared.midCall++;
    if (held) await abortable(held, request.signal);
    if (request.signal?.aborted) throw new ModelError("the model call was cancelled", null, true);
    const content = this.answer(request);
    return { content, stopReason: content.some((b) => b.type === "tool_use") ? "tool_use" : "end_turn", usage: { inputTokens: 10, outputTokens: 5 }, requestId: null };
  }

  private answer(request: ModelRequest): AssistantBlock[] {
    const last = request.messages[request.messages.length - 1]!;
    const results = last.content.filter((b) => b.type === "tool_result");
    const said = last.content.flatMap((b) => (b.type === "text" ? [b.text] : [])).join(" ");
    if (request.system.includes('skill "interview"')) {
      if (results.length > 0) return [this.use("complete", { result: `booked: ${results.map((r) => r.content).join("; ")}` })];
      if (request.messages.length === 1) return [{ type: "text", text: "Where to?" }];
      return [this.use("ledger", { booking: said })];
    }
    if (inCallee(request.system)) {
      // A call_agent callee: it books a guide (a side effect) and answers its caller.
      if (results.length > 0) return [{ type: "text", text: `guide ${results.map((r) => r.content).join("; ")}` }];
      return [this.use("ledger", { booking: said.replace(/^find a guide in /, "") })];
    }
    if (results.length > 0) return [{ type: "text", text: `All set (${results.map((r) => r.content).join("; ")})` }];
    if (said.startsWith("plan")) return [this.use("use_skill", { name: "interview", message: `plan a trip for: ${said}` })];
    if (said.startsWith("guide")) return [this.use("call_agent", { agent: "researcher", message: `find a guide in ${said}` })];
    if (said.startsWith("forecast")) return [this.use("call_agent", { agent: "forecast", message: `the weather for ${said}` })];
    return [{ type: "text", text: `answer to ${said}` }];
  }

  private use(name: string, input: Record<string, unknown>): AssistantBlock {
    return { type: "tool_use", id: `toolu_${++this.shared.toolIds}`, name, input };
  }
}

/** A held answer is dropped when the turn is cancelled (the replica noticed it lost the lease), as the SDK would. */
function abortable(held: Promise<void>, signal: AbortSignal | undefined): Promise<void> {
  if (!signal) return held;
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(new ModelError("the model call was cancelled", null, true));
    if (signal.aborted) return onAbort();
    signal.addEventListener("abort", onAbort, { once: true });
    held.then(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, reject);
  });
}

/**
 * The booking service: a side effect, counted outside the process, after which the replica can freeze. Not
 * idempotent, so the runtime commits a running mark first; `plantIdempotent` is the planted bug that says it
 * is (no mark), so a replica taking over books again.
 */
export function ledgerTool(replica: string, outside: Outside, gate: PauseGate, shared: ModelShared, plantIdempotent = false): Tool {
  const trace = shared.trace;
  return {
    spec: { name: "ledger", description: "Books the trip (a side effect).", input_schema: { type: "object", properties: { booking: { type: "string" } } } },
    idempotent: plantIdempotent,
    async run(input, ctx) {
      const booking = String(input.booking);
      outside.bookings.set(booking, (outside.bookings.get(booking) ?? 0) + 1);
      outside.runs.set(ctx.toolUseId, (outside.runs.get(ctx.toolUseId) ?? 0) + 1);
      trace(`${replica} ledger: booked "${booking}" (${ctx.toolUseId})`);
      const held = gate.wait("ledger");
      if (gate.state !== "running" && ctx.frame.mode === "batch") shared.midCall++;
      if (held) await held;
      return { content: `booked ${booking}` };
    },
  };
}
