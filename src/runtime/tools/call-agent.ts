import { z } from "zod";
import { available } from "../../catalog/definition.js";
import { CallerGaveUp } from "../batch.js";
import { TargetBusyError, type Lease } from "../call-limiter.js";
import type { StackFrame } from "../frame.js";
import { checkCallRules, refusedSchema, shortName } from "./call-rules.js";
import { filesProperty, filesToPass } from "./pass-files.js";
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
  files: z.unknown().optional(),
});

/**
 * A non-interactive call: the target agent runs in batch mode (it cannot talk to the user) and its final
 * text or report_back value is the result. Safe by construction: depth and cycle limits, a per-target
 * concurrency cap with a bounded queue, a timeout that answers the caller on time whether or not the
 * callee notices its abort, size caps both ways. Every failure is a tool error the caller can act on.
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
          files: filesProperty("agent"),
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
      const optedOut = refusedSchema(def, parsed.data.output_schema);
      if (optedOut) return fail(`call_agent refused: ${optedOut}. Nothing was called.`);
      const schema = parsed.data.output_schema ?? def.outputSchema ?? null;
      if (schema !== null) {
        const compiled = await ctx.schemas.compile(schema);
        if (!compiled.ok) return fail(`call_agent refused: ${compiled.error}. Nothing was called.`);
      }
      const passed = await filesToPass(ctx.frame, parsed.data.files, ctx);
      if (!passed.ok) return fail(`call_agent refused: ${passed.error}. Nothing was called.`);
      const timeoutMs = clampTimeout(parsed.data.timeout_ms ?? ctx.settings.callTimeoutMs);
      const target = shortName(def.name);
      const timedOut = `call to ${target} timed out after ${formatDuration(timeoutMs)}`;
      // One deadline for the whole call, the wait for a slot included.
      const deadline = new AbortController();
      const timer = ctx.timers.setTimeout(() => deadline.abort(new CallerGaveUp(timedOut)), timeoutMs);
      const signal = AbortSignal.any([ctx.signal, deadline.signal]);
      let lease: Lease;
      try {
        lease = await ctx.limiter.acquire(def.name, signal, ctx.limiter.leaseOf(ctx.signal));
      } catch (error) {
        ctx.timers.clearTimeout(timer);
        if (error instanceof TargetBusyError) return fail(error.message);
        if (deadline.signal.aborted) {
          const running = ctx.limiter.inFlight(def.name);
          return fail(`${timedOut} waiting for a free slot (${running} call${running === 1 ? "" : "s"} to ${target} still running). Try again later.`);
        }
        throw error;
      }
      ctx.limiter.runsUnder(signal, lease);
      let child: StackFrame;
      try {
        const previous = def.carryover ? await ctx.previousRun(`agent:${def.name}`) : null;
        const task = previous ? `A summary of your previous run in this conversation:\n${previous}\n\nYour new task:\n${message}` : message;
        child = buildChildFrame(def, ctx.frame, task, ctx, toolNames(), schema as Record<string, unknown> | null, "batch", passed.files);
      } catch (error) {
        ctx.timers.clearTimeout(timer);
        lease();
        throw error;
      }
      // The slot is held until the callee has really stopped, even when the caller stops waiting first:
      // otherwise a callee that ignores its abort signal would let more calls in than the cap allows.
      const run = settle(ctx.runBatch(child, signal)).finally(() => lease());
      const stop = whenAborted(signal);
      const outcome = await Promise.race([run, stop.promise]);
      stop.dispose();
      ctx.timers.clearTimeout(timer);
      if (outcome === ABORTED || deadline.signal.aborted) {
        // Answer now; the callee closes itself in the log whenever it does stop.
        void run.then((late) => {
          if ("error" in late) ctx.log.warn({ err: late.error, agent: def.name }, "an abandoned call_agent callee failed");
        });
        if (deadline.signal.aborted) return fail(timedOut);
        const why = ctx.signal.reason instanceof Error ? ctx.signal.reason.message : "cancelled";
        return fail(`call to ${target} was stopped: ${why}`);
      }
      if ("error" in outcome) throw outcome.error;
      const output = outcome.output;
      return output.isError ? output : { content: capResult(output.content) };
    },
  };
}

const ABORTED = Symbol("aborted");

/** A promise that never rejects: the value, or the error it failed with. */
function settle<T>(promise: Promise<T>): Promise<{ output: T } | { error: unknown }> {
  return promise.then(
    (output) => ({ output }),
    (error: unknown) => ({ error }),
  );
}

/** Resolves when `signal` aborts; `dispose` stops listening once the race is decided. */
function whenAborted(signal: AbortSignal): { promise: Promise<typeof ABORTED>; dispose(): void } {
  let listener = () => {};
  const promise = new Promise<typeof ABORTED>((resolve) => {
    listener = () => resolve(ABORTED);
    if (signal.aborted) resolve(ABORTED);
    else signal.addEventListener("abort", listener, { once: true });
  });
  return { promise, dispose: () => signal.removeEventListener("abort", listener) };
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
