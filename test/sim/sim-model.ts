import { AsyncLocalStorage } from "node:async_hooks";
import { ModelError, type Model } from "../../src/llm/model.js";
import type { AssistantBlock, ModelRequest, ModelResponse } from "../../src/llm/types.js";
import { validateRequest } from "../fakes/anthropic/validate.js";
import type { Prng } from "./prng.js";
import type { VirtualTime } from "./virtual-time.js";

/** The request a model call belongs to (set by the world around each orchestrated request). */
export const currentRequest = new AsyncLocalStorage<string>();

export const CONTACT_SCHEMA = {
  type: "object",
  properties: { name: { type: "string", minLength: 1 }, email: { type: "string", format: "email" } },
  required: ["name", "email"],
};

export const SKILLS = ["interview", "summary"];
export const AGENTS = ["researcher", "extractor", "helper"];
/** A target that exists but cannot be called (the key it needs is not set); it takes every second "ghost" pick. */
export const UNAVAILABLE = "weather";

export interface ModelBehaviour {
  /** Every call asks for the `note` tool again (for the no-hang planted bug). */
  loop?: boolean;
  /** Prefer hand-overs, and use the rule-free `spawn_any` stub when offered (depth/cycle planted bug). */
  deep?: boolean;
  /** Bound on model calls per request before the run is stopped as a hang. */
  maxCallsPerRequest: number;
  /** Inject API errors, timeouts and slow calls (default on). */
  faults?: boolean;
  /** A faulty stub between the runtime and the model: it loses the tool results of the newest message. */
  corruptRequests?: boolean;
  /**
   * Calls pile up on one agent: most hand-overs are call_agent to `researcher`, and a slow model call lets the
   * other chats run meanwhile (as a real one would), so calls overlap (with a tight limiter: "target busy").
   */
  crowd?: boolean;
}

/**
 * The scripted model: every request is first checked against the strict Messages API rules (the same
 * validator as the HTTP fake), then answered by the seed with real tool uses, text, and faults.
 */
export class SimModel implements Model {
  readonly configured = true;
  readonly setupHint = "";
  readonly defaultModel = "claude-sim";
  readonly violations: string[] = [];
  calls = 0;
  private toolIds = 0;
  /** Picks of a missing target so far; every second one is the unavailable agent instead (no draw from the seed). */
  private ghosts = 0;
  private readonly perRequest = new Map<string, number>();

  constructor(
    private readonly prng: Prng,
    private readonly time: VirtualTime,
    private readonly behaviour: ModelBehaviour,
  ) {}

  contextLimit(): Promise<number | null> {
    return Promise.resolve(null);
  }

  callsFor(requestId: string): number {
    return this.perRequest.get(requestId) ?? 0;
  }

  async complete(request: ModelRequest): Promise<ModelResponse> {
    this.calls++;
    const requestId = currentRequest.getStore() ?? "(none)";
    const count = (this.perRequest.get(requestId) ?? 0) + 1;
    this.perRequest.set(requestId, count);
    const messages = this.behaviour.corruptRequests ? loseToolResults(request.messages) : request.messages;
    const body = {
      model: request.model,
      max_tokens: 1024,
      ...(request.system ? { system: request.system } : {}),
      messages,
      ...(request.tools.length ? { tools: request.tools } : {}),
    };
    const invalid = validateRequest(JSON.parse(JSON.stringify(body)));
    if (invalid) {
      this.violations.push(`model request rejected by the Messages API rules (request ${requestId}): ${invalid.message}`);
      throw new ModelError(`Anthropic API error 400: ${invalid.message}`, 400);
    }
    if (count > this.behaviour.maxCallsPerRequest) {
      this.violations.push(`no hang: request ${requestId} made more than ${this.behaviour.maxCallsPerRequest} model calls`);
      throw new ModelError("simulation stopped a runaway request");
    }
    const fault = this.behaviour.faults === false ? "none" : this.prng.weighted({ none: 90, overloaded: 3, server: 2, rate: 2, timeout: 1, slow: 8 });
    if (fault === "overloaded") throw new ModelError("Anthropic API error 529: Overloaded", 529);
    if (fault === "server") throw new ModelError("Anthropic API error 500: Internal server error", 500);
    if (fault === "rate") throw new ModelError("Anthropic API error 429: rate limited", 429);
    if (fault === "timeout") throw new ModelError("request timed out");
    if (fault === "slow" && this.behaviour.crowd) await new Promise((resolve) => setImmediate(resolve));
    this.time.advance(fault === "slow" ? this.prng.int(40_000) : 1);
    if (request.signal?.aborted) throw new ModelError("the model call was cancelled", null, true);
    const content = this.answer(request, count);
    return { content, stopReason: content.some((b) => b.type === "tool_use") ? "tool_use" : "end_turn", usage: { inputTokens: 10, outputTokens: 5 }, requestId: null };
  }

  private answer(request: ModelRequest, callsSoFar: number): AssistantBlock[] {
    const offered = request.tools.map((t) => t.name);
    if (this.behaviour.loop) return [this.use("note", {})];
    const late = callsSoFar > 8;
    const kind = this.prng.weighted({
      text: late ? 40 : 22,
      finish: late ? 40 : 20,
      spawn: late ? 2 : this.behaviour.deep ? 60 : this.behaviour.crowd ? 30 : 18,
      parallel: late ? 1 : 8,
      tool: 12,
      malformed: 3,
      unoffered: 2,
    });
    switch (kind) {
      case "text":
        return [{ type: "text", text: `reply ${this.prng.int(1000)}` }];
      case "finish":
        return [this.finish(offered) ?? { type: "text", text: "done" }];
      case "spawn":
        return [this.spawn(offered) ?? { type: "text", text: "nothing to hand over" }];
      case "parallel": {
        const blocks = Array.from({ length: 2 + this.prng.int(2) }, () => this.prng.pick(["tool", "spawn", "finish"] as const))
          .map((k) => (k === "tool" ? this.tool(offered) : k === "spawn" ? this.spawn(offered) : this.finish(offered)))
          .filter((b): b is AssistantBlock => b !== null);
        return blocks.length ? blocks : [{ type: "text", text: "nothing to do" }];
      }
      case "tool":
        return [this.tool(offered) ?? { type: "text", text: "no tools" }];
      case "malformed": {
        const name = this.prng.pick(offered.length ? offered : ["note"]);
        return offered.includes(name) ? [this.use(name, { name: 42, agent: [], message: null })] : [{ type: "text", text: "x" }];
      }
      case "unoffered": {
        const missing = ["use_skill", "complete", "report_back", "ledger"].filter((n) => !offered.includes(n));
        return [this.use(this.prng.pick(missing), { result: "sneaky", name: "interview", message: "x" })];
      }
    }
  }

  private use(name: string, input: Record<string, unknown>): AssistantBlock {
    return { type: "tool_use", id: `toolu_sim_${++this.toolIds}`, name, input };
  }

  private finish(offered: string[]): AssistantBlock | null {
    if (offered.includes("report_back")) {
      const valid = this.prng.chance(0.7);
      return this.use("report_back", valid ? { name: "Ana", email: "ana@example.com" } : { name: "" });
    }
    if (offered.includes("complete")) return this.use("complete", { result: `result ${this.prng.int(1000)}` });
    return null;
  }

  private spawn(offered: string[]): AssistantBlock | null {
    const kinds = ["spawn_any", "use_skill", "use_agent", "call_agent"].filter((n) => offered.includes(n));
    if (kinds.length === 0) return null;
    const crowded = this.behaviour.crowd && kinds.includes("call_agent") && this.prng.chance(0.8);
    const kind = crowded ? "call_agent" : this.behaviour.deep && kinds.includes("spawn_any") ? "spawn_any" : this.prng.pick(kinds);
    const schema = this.prng.chance(0.2) ? { output_schema: CONTACT_SCHEMA } : {};
    if (kind === "use_skill") return this.use(kind, { name: this.prng.pick([...SKILLS, "ghost"]), message: "help", ...schema });
    if (kind === "call_agent") {
      const timeout = this.prng.pick([undefined, 0, 5_000, 20_000, 999_999]);
      return this.use(kind, {
        agent: crowded ? "researcher" : this.agent(),
        message: "look this up",
        ...(timeout === undefined ? {} : { timeout_ms: timeout }),
        ...schema,
      });
    }
    return this.use(kind, { name: this.agent(), message: "help", ...schema });
  }

  /** A target: one of the agents, or one that cannot be called (missing, or unavailable). */
  private agent(): string {
    const name = this.prng.pick([...AGENTS, "ghost"]);
    return name === "ghost" && ++this.ghosts % 2 === 0 ? UNAVAILABLE : name;
  }

  private tool(offered: string[]): AssistantBlock | null {
    const tools = ["note", "ledger", "flaky", "transfer"].filter((n) => offered.includes(n));
    return tools.length ? this.use(this.prng.pick(tools), {}) : null;
  }
}

/** The planted bug for the request checker: the newest user message loses its tool_result blocks. */
function loseToolResults(messages: ModelRequest["messages"]): ModelRequest["messages"] {
  const last = messages[messages.length - 1];
  if (!last || last.role !== "user" || !last.content.some((b) => b.type === "tool_result")) return messages;
  const kept = last.content.filter((b) => b.type !== "tool_result");
  return [...messages.slice(0, -1), { role: "user", content: kept.length ? kept : [{ type: "text", text: "(results lost)" }] }];
}
