import { addUserText, executeTurn, type TurnDeps } from "./executor.js";
import { MAX_REPORT_ATTEMPTS } from "./tools/report-back.js";
import { AgentStack, type StackFrame } from "./frame.js";
import { pushChild, returnToParent } from "./transitions.js";
import type { ToolOutput } from "./tools/tool.js";

/**
 * The bypass path: runs a child (and anything it spawns) to the end without the user. A text reply
 * ends a batch frame the way complete() does. Its frames are logged but never put on the durable stack.
 */
export async function runToCompletion(child: StackFrame, deps: TurnDeps): Promise<ToolOutput> {
  const stack = new AgentStack();
  child.mode = "batch";
  pushChild(stack, child, deps.journal);
  deps.log.info({ frame: child.frameId, agent: child.agentName }, "batch run started");
  for (;;) {
    const frame = stack.top!;
    const result = await executeTurn(frame, { kind: "resume" }, deps);
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
        if (!returnToParent(stack, deps.journal, result.text, false)) return { content: result.text };
        break;
      case "COMPLETE":
        if (!returnToParent(stack, deps.journal, result.text, false, result.structured)) return { content: result.text };
        break;
      case "CHILD_ACTIVATED":
        result.child.mode = "batch";
        pushChild(stack, result.child, deps.journal);
        break;
      case "INTERRUPT":
      case "MAX_ITERATIONS":
      case "ERROR":
        if (!returnToParent(stack, deps.journal, result.text, true)) {
          return { content: `${frame.agentName} failed: ${result.text}`, isError: true };
        }
        break;
      default: {
        const never: never = result;
        throw new Error(`unknown turn result ${JSON.stringify(never)}`);
      }
    }
  }
}
