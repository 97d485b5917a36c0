import { Journal } from "./journal.js";
import { executeTurn, type TurnDeps } from "./executor.js";
import { addUserText } from "./messages.js";
import { MAX_REPORT_ATTEMPTS } from "./tools/report-back.js";
import { resultChars } from "./result-bound.js";
import { AgentStack, type StackFrame } from "./frame.js";
import { childSystemPrompt } from "./prompts.js";
import { closeUnresolved, pushChild, returnToParent } from "./transitions.js";
import type { ToolOutput } from "./tools/tool.js";

/**
 * The abort reason of a caller that stopped waiting (call_agent's deadline passed). The callee may run on
 * until it notices, long after its caller's request is over; it then closes itself in the log.
 */
export class CallerGaveUp extends Error {
  override name = "CallerGaveUp";
}

const GAVE_UP_NOTE = "the caller had already given up waiting; nobody received this result";

/**
 * The bypass path: runs a child (and anything it spawns) to the end without the user. A text reply
 * ends a batch frame the way complete() does. Its frames are logged but never put on the durable stack.
 *
 * The run commits its rows through a journal of its own, never through its caller's: once the caller stops
 * waiting (a call timeout, a cancel) it goes on with its own step while the run may not have noticed yet, and a
 * flush of the caller's journal from here would commit half of that step (its "tool about to run" mark cleared,
 * the call's result not yet written). What the run leaves uncommitted is flushed before it returns.
 */
export async function runToCompletion(child: StackFrame, callerDeps: TurnDeps): Promise<ToolOutput> {
  const caller = callerDeps.journal;
  const deps: TurnDeps = { ...callerDeps, journal: new Journal(caller.writer, caller.requestId, caller.taskId) };
  const output = await run(child, deps);
  await deps.journal.flush();
  return output;
}

async function run(child: StackFrame, deps: TurnDeps): Promise<ToolOutput> {
  const stack = new AgentStack();
  pushChild(stack, asBatch(child, deps), deps.journal);
  // On record before it does anything: the run shows as open until it ends, even while a tool of its own hangs.
  await deps.journal.flush();
  deps.log.info({ frame: child.frameId, agent: child.agentName }, "batch run started");
  for (;;) {
    const frame = stack.top!;
    const result = await executeTurn(frame, { kind: "resume" }, deps);
    if (deps.signal.aborted) {
      // Cut short (a call timeout, a cancel, shutdown): close every open batch frame in the log.
      const reason = deps.signal.reason instanceof Error ? deps.signal.reason.message : "cancelled";
      await closeStopped(stack, deps, reason, deps.signal.reason instanceof CallerGaveUp);
      return { content: `${frame.agentName} was stopped: ${reason}`, isError: true };
    }
    switch (result.action) {
      case "SEND_TEXT":
        if (frame.outputSchema) {
          // No user to read it: a schema'd batch frame must finish with report_back.
          frame.reportAttempts += 1;
          if (frame.reportAttempts >= MAX_REPORT_ATTEMPTS) {
            const text = `no report_back after ${MAX_REPORT_ATTEMPTS} replies in plain text`;
            if (!returnToParent(stack, deps.journal, text, true)) return { content: `${frame.agentName} failed: ${text}`, isError: true };
            break;
          }
          addUserText(frame, deps.journal, "Plain text is not a result here: call report_back with arguments that match its schema.");
          break;
        }
        if (!returnToParent(stack, deps.journal, result.text, false, { maxChars: resultChars(deps.settings) })) return { content: result.text };
        break;
      case "COMPLETE":
        // The task shows the last structured result reported in it, whether the child ran interactive or batch.
        if (result.structured && deps.journal.taskId) deps.journal.stage({ task: { id: deps.journal.taskId, status: "running", structuredOutput: result.structured } });
        if (!returnToParent(stack, deps.journal, result.text, false, { structured: result.structured, maxChars: resultChars(deps.settings) }))
          return { content: result.text };
        break;
      case "CHILD_ACTIVATED":
        pushChild(stack, asBatch(result.child, deps), deps.journal);
        break;
      case "INTERRUPT":
      case "MAX_ITERATIONS":
      case "ERROR": {
        // Nobody can approve a call in the middle of a batch run: it fails, and its calls are closed.
        const why = result.action === "INTERRUPT" ? `${result.text.replace("waiting for", "needs")}, which a batch run cannot wait for` : result.text;
        closeUnresolved(frame, deps.journal, `not run: ${why}`);
        if (!returnToParent(stack, deps.journal, why, true)) {
          return { content: `${frame.agentName} failed: ${why}`, isError: true };
        }
        break;
      }
      default: {
        const never: never = result;
        throw new Error(`unknown turn result ${JSON.stringify(never)}`);
      }
    }
  }
}

/**
 * Closes a run that was cut short, top frame first. Its caller may have moved on (nobody else will commit these
 * rows: the caller's request may be long done), and a /cancel in the meantime may already have closed the run's
 * session, which must not end twice. The bottom frame of a run whose caller gave up says that nobody got its result.
 */
async function closeStopped(stack: AgentStack, deps: TurnDeps, reason: string, gaveUp: boolean): Promise<void> {
  const { journal } = deps;
  const bottom = stack.all()[0]!;
  const closed = (await deps.store.steps.log(journal.sessionKey)).some((e) => e.type === "agent_session_complete" && e.agentSessionId === bottom.agentSessionId);
  if (!closed) {
    while (stack.top !== bottom) {
      closeUnresolved(stack.top!, journal, `not run: ${reason}`);
      returnToParent(stack, journal, reason, true);
    }
    closeUnresolved(bottom, journal, `not run: ${reason}`);
    stack.pop();
    journal.append(bottom, "agent_session_complete", {
      agent_session_id: bottom.agentSessionId,
      agent_name: bottom.agentName,
      result: reason,
      is_error: true,
      ...(gaveUp ? { note: GAVE_UP_NOTE } : {}),
    });
  }
  if (gaveUp) deps.log.info({ frame: bottom.frameId, agent: bottom.agentName, reason }, "batch run stopped after its caller gave up");
}

/** Inside a batch run nobody can answer questions: anything spawned there runs in batch mode too, and is told so. */
function asBatch(frame: StackFrame, deps: TurnDeps): StackFrame {
  if (frame.mode === "batch") return frame;
  const catalog = frame.agentType === "skill" ? deps.catalog.skills : deps.catalog.agents;
  const def = frame.definitionName ? catalog.get(frame.definitionName) : undefined;
  return {
    ...frame,
    mode: "batch",
    ...(def ? { systemPrompt: childSystemPrompt(def, frame.outputSchema !== null, "batch", frame.effectiveTools) } : {}),
  };
}
