// What the simpler chat commands answer: the catalogue (/skills, /start, /help) and an approval decision.
import { available, type Catalog } from "../catalog/definition.js";
import type { DecisionResult } from "./types.js";

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

export function decisionText(result: DecisionResult, id: string): string {
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
