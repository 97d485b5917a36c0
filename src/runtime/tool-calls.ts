import { allowsTool } from "../catalog/tool-patterns.js";
import type { ToolUseBlock } from "../llm/types.js";
import type { TurnDeps } from "./executor.js";
import { ChildActivated, TurnAction, type StackFrame, type TurnResult } from "./frame.js";
import { addFiles, addToolResult, storedResult } from "./messages.js";
import { sessionFile } from "./file-blocks.js";
import { fileKeeper } from "./file-keeper.js";
import { NO_OBSERVER } from "./observer.js";
import { resultChars } from "./result-bound.js";
import { mayUse } from "./tools/registry.js";
import { COMPLETE } from "./tools/complete.js";
import { checkReport, MAX_REPORT_ATTEMPTS, REPORT_BACK } from "./tools/report-back.js";
import type { ToolContext, ToolOutput } from "./tools/tool.js";

// The tool calls of one model message: the stack's own (complete, report_back), approvals, and the rest run here.

export const INTERRUPTED = "interrupted by a restart; it may or may not have run. Check its effect before trying again.";

/**
 * The frame ends with this tool use: answer it, every later one in the message, and any earlier one still
 * waiting for approval, so the log stays well-formed.
 */
function finishWith(frame: StackFrame, uses: ToolUseBlock[], index: number, deps: TurnDeps, reply: string, isError: boolean, waiting: ToolUseBlock[]): void {
  addToolResult(frame, deps.journal, uses[index]!.id, reply, isError);
  for (const rest of [...waiting, ...uses.slice(index + 1)]) {
    addToolResult(frame, deps.journal, rest.id, `not run: ${frame.agentName} finished in the same message`, true);
  }
}

/** Whether a call must wait for the owner's yes. Fails closed: when in doubt, it waits. */
export function needsApproval(frame: StackFrame, use: ToolUseBlock, deps: Pick<TurnDeps, "tools" | "catalog">): boolean {
  const tool = deps.tools.get(use.name);
  if (!tool) return false; // an unknown tool never runs at all
  if (frame.approvalTools.includes("*") || allowsTool(frame.approvalTools, use.name)) return true;
  // A definition that can no longer be read: its approval rules are unknown, so ask.
  if (frame.definitionName && !(frame.agentType === "skill" ? deps.catalog.skills : deps.catalog.agents).has(frame.definitionName)) {
    return tool.requiresApproval !== undefined || !isStackTool(use.name);
  }
  try {
    return typeof tool.requiresApproval === "function" ? tool.requiresApproval(use.input) : tool.requiresApproval === true;
  } catch {
    return true;
  }
}

function isStackTool(name: string): boolean {
  return ["use_skill", "use_agent", "call_agent", "complete", "report_back", "read_skill_file"].includes(name);
}

const DENIED = "the user denied this call";
const EXPIRED = "no one approved this call in time, so it was treated as denied";
const WITHDRAWN = "the task expired before this call was approved, so it was not run";

export async function resolveToolUses(frame: StackFrame, uses: ToolUseBlock[], deps: TurnDeps): Promise<TurnResult | null> {
  const waiting: ToolUseBlock[] = [];
  // An approval answers only the call of this session and task: the same call anywhere else is asked again.
  const scope = { sessionKey: deps.journal.sessionKey, taskId: deps.journal.taskId };
  const observer = deps.observer ?? NO_OBSERVER;
  for (const [index, use] of uses.entries()) {
    if (use.name === COMPLETE && frame.agentType !== "main" && frame.effectiveTools.includes(COMPLETE)) {
      return observer.toolCall(
        deps.journal.sessionKey,
        frame,
        use,
        async () => {
          const raw = use.input.result;
          finishWith(frame, uses, index, deps, "completed", false, waiting);
          return { action: TurnAction.COMPLETE, text: typeof raw === "string" ? raw : JSON.stringify(raw ?? "") };
        },
        () => "ok",
      );
    }
    if (use.name === REPORT_BACK && frame.outputSchema && frame.effectiveTools.includes(REPORT_BACK)) {
      const reported = await observer.toolCall(
        deps.journal.sessionKey,
        frame,
        use,
        () => report(frame, uses, index, deps, waiting),
        (r) => (r?.action === "COMPLETE" ? "ok" : "error"),
      );
      if (reported) return reported;
      continue;
    }
    if (allowsTool(frame.effectiveTools, use.name) && needsApproval(frame, use, deps)) {
      const approval = await deps.store.approvals.forCall(use, scope);
      if (!approval || approval.status === "pending") {
        waiting.push(use); // the calls that need no approval still run now
        continue;
      }
      if (approval.status !== "approved") {
        addToolResult(frame, deps.journal, use.id, approval.status === "denied" ? DENIED : approval.status === "withdrawn" ? WITHDRAWN : EXPIRED, true);
        continue;
      }
    }
    const outcome = await observer.toolCall(
      deps.journal.sessionKey,
      frame,
      use,
      () => runTool(frame, use, deps),
      (o) => ("child" in o ? "handoff" : o.isError ? "error" : "ok"),
    );
    if ("child" in outcome) return { action: TurnAction.CHILD_ACTIVATED, child: outcome.child };
    addToolResult(frame, deps.journal, use.id, outcome.content, outcome.isError === true, resultChars(deps.settings));
    if (outcome.files?.length) addFiles(frame, deps.journal, outcome.files);
  }
  if (waiting.length > 0) {
    const unasked = [];
    for (const use of waiting) if (!(await deps.store.approvals.forCall(use, scope))) unasked.push(use);
    const approvals = unasked.map((use) => ({ id: deps.ids.next("ap"), toolUseId: use.id, toolName: use.name, input: use.input }));
    return { action: TurnAction.INTERRUPT, text: `waiting for approval of ${waiting.map((u) => u.name).join(", ")}`, approvals };
  }
  return null;
}

/** A report_back call: the frame's result when it matches the schema, else an error result and another try (null). */
async function report(frame: StackFrame, uses: ToolUseBlock[], index: number, deps: TurnDeps, waiting: ToolUseBlock[]): Promise<TurnResult | null> {
  const use = uses[index]!;
  const check = await checkReport(frame, use.input, deps.schemas);
  if (check.ok) {
    finishWith(frame, uses, index, deps, "reported", false, waiting);
    return { action: TurnAction.COMPLETE, text: JSON.stringify(check.value), structured: check.value };
  }
  frame.reportAttempts += 1;
  deps.journal.touch(frame);
  const list = check.violations.map((v) => `- ${v}`).join("\n");
  if (frame.reportAttempts >= MAX_REPORT_ATTEMPTS) {
    finishWith(frame, uses, index, deps, `report_back arguments do not match the schema:\n${list}`, true, waiting);
    return {
      action: TurnAction.ERROR,
      text: `no valid report_back after ${MAX_REPORT_ATTEMPTS} attempts; the last one had these violations:\n${list}`,
    };
  }
  const left = MAX_REPORT_ATTEMPTS - frame.reportAttempts;
  addToolResult(
    frame,
    deps.journal,
    use.id,
    `report_back arguments do not match the schema:\n${list}\nFix them and call report_back again (${left} attempt${left > 1 ? "s" : ""} left).`,
    true,
  );
  return null;
}

/**
 * Runs one tool. A child activation is honoured even when the tool's own code caught ChildActivated
 * (TypeScript has no BaseException): the context remembers it and the runner re-raises it as a result.
 */
async function runTool(frame: StackFrame, use: ToolUseBlock, deps: TurnDeps): Promise<ToolOutput | { child: StackFrame }> {
  const tool = deps.tools.get(use.name);
  if (!tool || !mayUse(frame, use.name)) {
    const offered = deps.tools.specsFor(frame, deps.catalog).map((s) => s.name);
    return { content: `tool "${use.name}" is not available to ${frame.agentName}; available: ${offered.join(", ") || "none"}`, isError: true };
  }
  if (frame.runningToolUseId === use.id) {
    frame.runningToolUseId = null;
    deps.journal.touch(frame);
    return { content: tool.interrupted ?? `${use.name} was ${INTERRUPTED}`, isError: true };
  }
  const idempotent = typeof tool.idempotent === "function" ? tool.idempotent(use.input, deps) : tool.idempotent;
  if (!idempotent) {
    frame.runningToolUseId = use.id;
    deps.journal.touch(frame);
    await deps.journal.flush();
  }
  let activated: StackFrame | null = null;
  const ctx: ToolContext = {
    fence: deps.journal.writer.fence,
    frame,
    toolUseId: use.id,
    catalog: deps.catalog,
    settings: deps.settings,
    ids: deps.ids,
    signal: deps.signal,
    log: deps.log,
    limiter: deps.limiter,
    timers: deps.timers,
    schemas: deps.schemas,
    ...(deps.owner !== undefined ? { owner: deps.owner } : {}),
    sessionKey: deps.journal.sessionKey,
    taskId: deps.journal.taskId,
    previousRun: (agentName) => previousRun(deps, agentName),
    storedResult: (toolUseId) => storedResult(frame, toolUseId, deps),
    sessionFile: (fileId) => sessionFile(deps.store, deps.journal.sessionKey, fileId),
    ...fileKeeper(frame, deps),
    async complete(request) {
      const call = { ...request, signal: deps.signal };
      const response = await (deps.observer ?? NO_OBSERVER).modelCall(deps.journal.sessionKey, frame, call, () => deps.model.complete(call));
      deps.journal.addUsage(response.usage);
      return response;
    },
    activateChild(child) {
      activated = child;
      throw new ChildActivated(child);
    },
    runBatch: (child, signal) => deps.runBatch(child, signal ? { ...deps, signal } : deps),
  };
  let output: ToolOutput;
  try {
    output = await tool.run(use.input, ctx);
  } catch (error) {
    if (error instanceof ChildActivated) activated = error.child;
    output = { content: `${use.name} failed: ${error instanceof Error ? error.message : String(error)}`, isError: true };
  }
  if (!idempotent) {
    frame.runningToolUseId = null;
    deps.journal.touch(frame);
  }
  if (activated) return { child: activated };
  return output;
}

/**
 * The result of the last successful run of `agentName` in this chat, for definitions with carryover. One that reads
 * the task owner's memories (`memory: true`) carries over only from runs in that owner's tasks: in a group, another
 * member's run may have been built on theirs.
 */
async function previousRun(deps: TurnDeps, agentName: string): Promise<string | null> {
  const log = await deps.store.steps.log(deps.journal.sessionKey);
  const [kind, name] = [agentName.slice(0, agentName.indexOf(":")), agentName.slice(agentName.indexOf(":") + 1)];
  const readsMemories = (kind === "skill" ? deps.catalog.skills : deps.catalog.agents).get(name)?.memory === true;
  const ownerOf = readsMemories ? new Map((await deps.store.tasks.ofSession(deps.journal.sessionKey)).map((t) => [t.id, t.ownerId])) : null;
  for (let i = log.length - 1; i >= 0; i--) {
    const entry = log[i]!;
    if (entry.type !== "agent_session_complete") continue;
    if (ownerOf && (entry.taskId === null || ownerOf.get(entry.taskId) !== deps.owner)) continue;
    const p = entry.payload as { agent_name?: string; result?: string; is_error?: boolean };
    if (p.agent_name === agentName && !p.is_error && p.result) return p.result.length > 2000 ? `${p.result.slice(0, 2000)}…` : p.result;
  }
  return null;
}
