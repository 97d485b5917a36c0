import { available, type Catalog } from "../catalog/definition.js";

export type ChatCommand =
  | "cancel"
  | "status"
  | "reset"
  | "start"
  | "help"
  | "skills"
  | "context"
  | "approve"
  | "deny"
  | "memory"
  | "forget"
  | "schedules"
  | "unschedule"
  | "timezone"
  | "usage";

const COMMANDS: Record<string, ChatCommand> = {
  cancel: "cancel",
  status: "status",
  reset: "reset",
  start: "start",
  help: "help",
  skills: "skills",
  context: "context",
  approve: "approve",
  deny: "deny",
  memory: "memory",
  forget: "forget",
  schedules: "schedules",
  unschedule: "unschedule",
  timezone: "timezone",
  usage: "usage",
};
const STOP_WORDS = new Set(["cancel", "stop"]);

/** Commands every chat platform offers (Telegram registers these with setMyCommands). */
export const COMMAND_MENU: ReadonlyArray<{ command: ChatCommand; description: string }> = [
  { command: "start", description: "What this bot can do" },
  { command: "skills", description: "List the skills and agents" },
  { command: "status", description: "Show who you are talking to" },
  { command: "context", description: "Context and token usage" },
  { command: "memory", description: "What I remember about you" },
  { command: "schedules", description: "Your scheduled jobs in this chat" },
  { command: "usage", description: "Your use today against the limits" },
  { command: "cancel", description: "Stop the running task" },
  { command: "reset", description: "Start a fresh conversation" },
];

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
    return Object.hasOwn(COMMANDS, name) ? COMMANDS[name]! : null;
  }
  if (taskActive && STOP_WORDS.has(withoutTrailing(trimmed.toLowerCase(), ".!"))) return "cancel";
  return null;
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

export function skillsText(catalog: Catalog): string {
  const lines = (title: string, defs: Catalog["skills"]) => {
    const usable = available(defs);
    return usable.length === 0 ? [] : [title, ...usable.map((d) => `• ${d.name}: ${d.description}`)];
  };
  const all = [...lines("Skills:", catalog.skills), ...lines("Agents:", catalog.agents)];
  return all.length ? all.join("\n") : "No skills or agents are installed yet.";
}

export function welcomeText(catalog: Catalog): string {
  return [
    "Hi! I'm Switchboard, an assistant that can hand your conversation to specialised skills and agents.",
    "Just write what you need. /status shows who you are talking to, /cancel stops a running task, /reset starts over.",
    "/memory shows what I remember about you (and /forget lets you remove it).",
    "",
    skillsText(catalog),
  ].join("\n");
}

/** The approval id after `/approve` or `/deny`. */
export function commandArgument(text: string): string {
  return text.trim().split(/\s+/)[1] ?? "";
}

export function decisionText(result: import("./types.js").DecisionResult, id: string): string {
  switch (result.status) {
    case "approved":
      return `Approved (${id}). Running it now.`;
    case "denied":
      return `Denied (${id}). I won't run it.`;
    case "already_decided":
      return `That was already decided (${result.decided}).`;
    case "task_expired":
      return `Too late: this task expired at ${new Date(result.expiresAt).toISOString()}, so the call was not run.`;
    case "not_owner":
      return "Only the person who started this task can approve or deny its tool calls.";
    case "not_found":
      return `There is no pending approval ${id}.`;
  }
}
