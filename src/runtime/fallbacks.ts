import type { Catalog } from "../catalog/definition.js";
import { MODEL_ALIASES } from "../catalog/models.js";
import type { StackFrame } from "./frame.js";

/**
 * The models a frame's calls fall back to: its definition's `fallback_models` (aliases resolved), read from the
 * catalog as it is now; undefined (the gateway's MODEL_FALLBACKS) for main and for definitions that name none.
 */
export function fallbacksFor(frame: StackFrame, catalog: Catalog): string[] | undefined {
  if (frame.agentType === "main" || frame.definitionName === null) return undefined;
  const definition = (frame.agentType === "skill" ? catalog.skills : catalog.agents).get(frame.definitionName);
  return definition?.fallbackModels?.map((name) => (Object.hasOwn(MODEL_ALIASES, name) ? MODEL_ALIASES[name]! : name));
}
