import { z } from "zod";
import { available } from "../../catalog/definition.js";
import { compileOutputSchema } from "../../catalog/json-schema.js";
import { TargetBusyError } from "../call-limiter.js";
import { checkCallRules, shortName } from "./call-rules.js";
import { buildChildFrame } from "./spawn.js";
import { fail, type Tool, type ToolOutput } from "./tool.js";

export const CALL_AGENT = "call_agent";
export const MAX_MESSAGE_BYTES = 100 * 1024;
export const MAX_RESULT_BYTES = 1024 * 1024;
export const MIN_TIMEOUT_MS = 1_000;
export const MAX_TIMEOUT_MS = 300_000;

const input = z.object({
  agent: z.string().trim().min(1),
  message: z.string().trim().min(1),
  timeout_ms: z.number().optional(),
  output_schema: z.unknown().optional(),
});

/**
 * A non-interactive call: the target agent runs in batch mode (it cannot talk to the user) and its final
 * text or report_back value is the result. Safe by construction: depth and cycle limits, a per-target
 * concurrency cap with a bounded queue, a timeout that aborts the callee, size caps both ways. Every
 * failure is a tool error the caller can act on.
 */
export function callAgentTool(toolNames: () => string[]): Tool {
  return {
    spec: {
      name: CALL_AGENT,
      description:
        "Ask another agent to do a task on its own and wait for its answer (it cannot talk to the user). Returns its final text, or JSON matching output_schema when you give one.",
      input_schema: {
        type: "object",
        properties: {
          agent: { type: "string", description: "The agent's name, as listed in your instructions." },
          message: { type: "string", description: "The task, with all the context it needs (it cannot see this conversation)." },
          timeout_ms: { type: "number", description: "How long to wait, 1000 to 300000 ms. Default 30000." },
          output_schema: { type: "object", description: 'Optional JSON Schema (top-level type "object") for a structured answer.' },
        },
        required: ["agent", "message"],
      },
    },
    // The callee runs tools of its own: an interrupted call is reported, not repeated.
    idempotent: false,
    async run(raw, ctx): Promise<ToolOutput> {
      const parsed = input.safeParse(raw);
      if (!parsed.success) return fail('call_agent needs a non-empty "agent" and "message" (and optionally timeout_ms, output_schema)');
      const { agent, message } = parsed.data;
      const bytes = Buffer.byteLength(message, "utf8");
      if (bytes > MAX_MESSAGE_BYTES) {
        return fail(`the message is ${Math.ceil(bytes / 1024)} KiB; call_agent accepts at most 100 KiB. Send a summary or the relevant part.`);
      }
      const def = ctx.catalog.agents.get(agent);
      if (!def || def.unavailable) {
        const usable = available(ctx.catalog.agents).map((d) => d.name);
        const why = def?.unavailable ? `the agent "${agent}" is unavailable: it ${def.unavailable}` : `there is no agent named "${agent}"`;
        return fail(`${why}; available: ${usable.length ? usable.join(", ") : "none"}`);
      }
      const refusal = checkCallRules(ctx.frame, `agent:${def.name}`, ctx.settings.callDepthMax);
      if (refusal) return fail(refusal);
      const schema = parsed.data.output_schema ?? def.outputSchema ?? null;
      if (schema !== null) {
        const compiled = compileOutputSchema(schema);
        if (!compiled.ok) return fail(`call_agent refused: ${compiled.error}. Nothing was called.`);
      }
      const timeoutMs = clampTimeout(parsed.data.timeout_ms ?? ctx.settings.callTimeoutMs);
      const timedOut = `call to ${shortName(def.name)} timed out after ${formatDuration(timeoutMs)}`;
      const deadline = new AbortController();
      const timer = ctx.timers.setTimeout(() => deadline.abort(new Error(timedOut)), timeoutMs);
      const signal = AbortSignal.any([ctx.signal, deadline.signal]);
      let release: (() => void) | null = null;
      try {
        release = await ctx.limiter.acquire(def.name, signal);
        const previous = def.carryover ? ctx.previousRun(`agent:${def.name}`) : null;
        const task = previous ? `A summary of your previous run in this conversation:\n${previous}\n\nYour new task:\n${message}` : message;
        const child = buildChildFrame(def, ctx.frame, task, ctx, toolNames(), schema as Record<string, unknown> | null, "batch");
        const output = await ctx.runBatch(child, signal);
        if (deadline.signal.aborted) return fail(timedOut);
        return output.isError ? output : { content: capResult(output.content) };
      } catch (error) {
        if (error instanceof TargetBusyError) return fail(error.message);
        if (deadline.signal.aborted) return fail(timedOut);
        throw error;
      } finally {
        ctx.timers.clearTimeout(timer);
        release?.();
      }
    },
  };
}

export function clampTimeout(ms: number): number {
  if (!Number.isFinite(ms)) return MIN_TIMEOUT_MS;
  return Math.min(MAX_TIMEOUT_MS, Math.max(MIN_TIMEOUT_MS, Math.round(ms)));
}

function formatDuration(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${(ms / 1000).toFixed(1)} s`;
}

/** At most 1 MiB, cut on a UTF-8 character boundary, with a note saying so. */
export function capResult(text: string): string {
  const bytes = Buffer.from(text, "utf8");
  if (bytes.length <= MAX_RESULT_BYTES) return text;
  let end = MAX_RESULT_BYTES;
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--; // back up to the start of a character
  const kept = bytes.subarray(0, end).toString("utf8");
  return `${kept}\n[truncated: the result was ${(bytes.length / 1024 / 1024).toFixed(1)} MiB; only the first 1 MiB is shown]`;
}
