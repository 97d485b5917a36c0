import type { Definition } from "../../catalog/definition.js";
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

/**
 * A caller's output_schema for a definition that refuses one (`output_schema: false`): the refusal, naming the field
 * that decides it and what to do; null when the call may go ahead.
 */
export function refusedSchema(def: Pick<Definition, "kind" | "name" | "acceptsOutputSchema">, schema: unknown): string | null {
  if (def.acceptsOutputSchema || schema === undefined || schema === null) return null;
  return `the ${def.kind} "${def.name}" does not take an output_schema (its definition sets output_schema: false) and answers in plain text; call it again without output_schema`;
}
