import type { StackFrame } from "../frame.js";

/** `agent:b` → `b`: how chains read in messages. */
export function shortName(agentName: string): string {
  return agentName.replace(/^(skill|agent):/, "");
}

/**
 * The rules every hand-over shares (use_skill, use_agent, call_agent): no cycles along the call chain
 * and no deeper than `depthMax` calls below main. Returns the refusal, or null when the call may go ahead.
 */
export function checkCallRules(caller: StackFrame, target: string, depthMax: number): string | null {
  const chain = caller.callChain;
  const at = chain.indexOf(target);
  if (at >= 0) return `cycle detected: ${[...chain.slice(at), target].map(shortName).join(" → ")}`;
  const depth = chain.length; // main is depth 0, so the new frame would be at chain.length
  if (depth > depthMax) return `call depth limit ${depthMax} reached: ${chain.map(shortName).join(" → ")}`;
  return null;
}
