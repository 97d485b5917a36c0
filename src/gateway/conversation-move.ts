import type { Logger } from "pino";
import type { AgentStackManager } from "../runtime/stack-manager.js";
import type { Store } from "../store/store.js";

export interface ConversationMoveDeps {
  store: Pick<Store, "sessions">;
  stacks: Pick<AgentStackManager, "invalidate">;
  log: Logger;
  /** Starts the new key's worker, which delivers what was pending. */
  wake: (sessionKey: string) => void;
}

/**
 * The chat behind a conversation moved (a Telegram group became a supergroup): its whole conversation, sub-keys
 * included, moves to the new key, and what was pending is delivered there.
 */
export async function moveConversation(deps: ConversationMoveDeps, from: string, to: string): Promise<void> {
  if (from === to) return;
  const result = await deps.store.sessions.move(from, to);
  if ("refused" in result) {
    deps.log.warn({ session: from, to, reason: result.refused }, "could not move the conversation");
    return;
  }
  if (result.moved === 0) return;
  for (const key of [from, to]) deps.stacks.invalidate(key);
  deps.log.info({ session: from, to }, "conversation moved");
  deps.wake(to);
}
