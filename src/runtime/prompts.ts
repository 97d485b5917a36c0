import { available, type Catalog, type Definition } from "../catalog/definition.js";
import { skillFolderPath } from "./tools/workspace/workspace.js";

/** The tools that see the skill's folder at skillFolderPath (mounted read-only there, and in the sandbox). */
const FOLDER_TOOLS = ["Read", "Glob", "Grep", "Bash"];

const MAIN_PROMPT = `You are Switchboard, a helpful assistant in a chat (Telegram, Slack or a terminal).
Answer the user directly when you can. Keep replies short and clear; use Markdown sparingly.`;

function listing(title: string, defs: Iterable<Definition>): string {
  // A definition that refuses a caller's schema says so up front, so the model does not pass one to learn it.
  const lines = [...defs].map((d) => `- ${d.name}: ${d.description}${d.acceptsOutputSchema ? "" : " (answers in plain text: takes no output_schema)"}`);
  return lines.length ? `\n\n${title}\n${lines.join("\n")}` : "";
}

/** Main carries only each skill's and agent's name and description; the full body loads on use. */
export function mainSystemPrompt(catalog: Catalog): string {
  const skills = listing(
    "Skills you can hand the conversation to with use_skill (the skill then talks with the user until it finishes and returns its result to you):",
    available(catalog.skills),
  );
  const agents = listing(
    "Agents you can hand the conversation to with use_agent (same: it talks with the user, then returns its result to you):",
    available(catalog.agents),
  );
  const after = skills || agents ? "\n\nWhen a skill or agent returns, use its result to answer the user. Do not repeat questions it already asked." : "";
  return `${MAIN_PROMPT}${skills}${agents}${after}`;
}

/**
 * A child's instructions: its body, then how it runs. A skill with a folder whose tools see that folder starts as in
 * Claude Code, with `Base directory for this skill: <path>`, so `python3 <base>/scripts/x.py` in its body works.
 */
export function childSystemPrompt(def: Definition, structured = false, mode: Definition["mode"] = def.mode, tools: readonly string[] = []): string {
  const finish = structured
    ? "call report_back with the result as its arguments, exactly matching its schema (you MUST finish this way; plain text does not count as a result)"
    : "call complete(result)";
  const how =
    mode === "batch"
      ? `You are the ${def.kind} "${def.name}", running on your own: you cannot talk with the user. ` +
        `Do the task you were given, then ${structured ? finish : "reply with your final answer (or call complete(result))"}.`
      : `You are the ${def.kind} "${def.name}". You now talk with the user directly: your text replies reach them, ` +
        `and their answers come back to you. When your task is done, ${finish}; the result goes to the ` +
        "agent that called you, which will continue the conversation. Do not say goodbye before finishing.";
  const base = def.kind === "skill" && def.folder && tools.some((t) => FOLDER_TOOLS.includes(t)) ? skillFolderPath(def.name) : null;
  const files = base
    ? ` Your skill folder is ${base}, read-only: read its files there and run its scripts from there (e.g. python3 ${base}/scripts/<script>); write your own files in the working directory.`
    : def.folder
      ? " Your skill folder may hold more material (references/, assets/, scripts/): read a file with read_skill_file when you need it."
      : "";
  // OpenClaw's skills write the folder as {baseDir}; it is the same path.
  const body = base ? def.body.replaceAll("{baseDir}", base) : def.body;
  return `${base ? `Base directory for this skill: ${base}\n\n` : ""}${body}\n\n---\n${how}${files}`;
}
