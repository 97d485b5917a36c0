export type ChatCommand = "cancel" | "status" | "reset";

const COMMANDS: Record<string, ChatCommand> = { cancel: "cancel", status: "status", reset: "reset" };
const STOP_WORDS = new Set(["cancel", "stop"]);

/**
 * Commands are handled before the model. `/cancel@MyBot` (Telegram's group form) counts too;
 * "cancel" or "stop" typed alone cancels only while a task is active, otherwise it is a normal message.
 */
export function parseCommand(text: string, taskActive: boolean): ChatCommand | null {
  const trimmed = text.trim();
  const slash = /^\/([a-z]+)(?:@[A-Za-z0-9_]+)?(?:\s|$)/i.exec(trimmed);
  if (slash) return COMMANDS[slash[1]!.toLowerCase()] ?? null;
  if (taskActive && STOP_WORDS.has(trimmed.toLowerCase().replace(/[.!]+$/, ""))) return "cancel";
  return null;
}
