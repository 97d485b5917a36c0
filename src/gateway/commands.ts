import { CHAT_COMMANDS, type ChatCommand } from "./command-table.js";

export type { ChatCommand } from "./command-table.js";
export { commandArgument, decisionText, skillsText, welcomeText } from "./command-texts.js";

const STOP_WORDS = new Set(["cancel", "stop"]);

/** Commands every chat platform offers (Telegram registers these with setMyCommands): the table's entries with a menu line. */
export const COMMAND_MENU: ReadonlyArray<{ command: ChatCommand; description: string }> = (Object.keys(CHAT_COMMANDS) as ChatCommand[]).flatMap((command) => {
  const { menu } = CHAT_COMMANDS[command] as { menu?: string };
  return menu ? [{ command, description: menu }] : [];
});

/**
 * Commands are handled before the model. `/cancel@MyBot` (Telegram's group form) counts too;
 * "cancel" or "stop" typed alone cancels only while a task is active, otherwise it is a normal message.
 */
export function parseCommand(text: string, taskActive: boolean): ChatCommand | null {
  const trimmed = text.trim();
  const slash = /^\/([a-z]+)(?:@[A-Za-z0-9_]+)?(?:\s|$)/i.exec(trimmed);
  // Own keys only: "/constructor" or "/__proto__" must not find Object.prototype's members.
  if (slash) {
    const name = slash[1]!.toLowerCase();
    return Object.hasOwn(CHAT_COMMANDS, name) ? (name as ChatCommand) : null;
  }
  if (taskActive && STOP_WORDS.has(withoutTrailing(trimmed.toLowerCase(), ".!"))) return "cancel";
  return null;
}

/** Whether anyone may send `command` into someone else's conversation (it only reads, or touches the sender's own things). */
export function anyoneMay(command: ChatCommand): boolean {
  return CHAT_COMMANDS[command].who === "anyone";
}

/** /cancel and /reset: they stop the running turn and go before queued messages; the others answer beside it. */
export function interrupts(command: ChatCommand): boolean {
  return CHAT_COMMANDS[command].interrupts;
}

/**
 * `text` without the run of `chars` at its end. Not `/[.!]+$/`: a regular expression retries that from every
 * character of a long run that does not reach the end, and 50 000 dots and an "x" took 26 s.
 */
function withoutTrailing(text: string, chars: string): string {
  let end = text.length;
  while (end > 0 && chars.includes(text[end - 1]!)) end--;
  return text.slice(0, end);
}
