import type { RuntimeEvent } from "../runtime/orchestrator.js";
import type { StoreChange } from "../store/store.js";

/** A runtime event as the change every replica hears: a stack change, a piece of a reply, or a reply taken back. */
export function changeOf(sessionKey: string, event: RuntimeEvent): StoreChange {
  switch (event.type) {
    case "delta":
      return { kind: "delta", sessionKey, requestId: event.requestId, event: { agent: event.agent, depth: event.depth, text: event.text } };
    case "reset":
      return { kind: "reset", sessionKey, requestId: event.requestId, event: { agent: event.agent, depth: event.depth } };
    case "push":
    case "pop":
      return { kind: "stack", sessionKey, event };
    default: {
      const never: never = event;
      throw new Error(`unknown runtime event ${JSON.stringify(never)}`);
    }
  }
}
