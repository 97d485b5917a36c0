import type { Logger } from "pino";
import { z } from "zod";
import { ModelError, type Model } from "../../llm/model.js";
import type { ModelRequest, ToolSpec } from "../../llm/types.js";
import type { MemoryChanges, MemoryJob, MemoryRecord, Store } from "../../store/store.js";
import { overBudget, type SessionBudget } from "../budget.js";
import type { Quotas } from "../quota.js";
import type { Ids } from "../deps.js";
import { agentLabel } from "../labels.js";
import { holdsSecret } from "./secrets.js";

export const SAVE_MEMORIES = "save_memories";
/** The conversation the extraction reads, at most (its end: the newest words), in characters. */
export const TRANSCRIPT_CHARS = 12_000;
/** Below this many characters of the user's own words a task has nothing worth keeping. */
const TRIVIAL_CHARS = 12;
const MAX_MEMORIES = 20;
const MAX_TEXT = 300;

const KINDS = ["identity", "preference", "project", "decision", "context"] as const;

const SPEC: ToolSpec = {
  name: SAVE_MEMORIES,
  description: "Save the durable facts about the user worth remembering in later conversations (an empty list when there are none).",
  input_schema: {
    type: "object",
    properties: {
      memories: {
        type: "array",
        items: {
          type: "object",
          properties: {
            text: { type: "string", description: 'One short self-contained fact about the user, in the third person ("Lives in Lisbon.").' },
            kind: { type: "string", enum: [...KINDS] },
            replaces: { type: "array", items: { type: "string" }, description: "Ids of existing memories this fact updates or contradicts (they are deleted)." },
          },
          required: ["text"],
        },
      },
    },
    required: ["memories"],
  },
};

const PROMPT = `You maintain a user's long-term memory for a chat assistant. Read the conversation and the memories already kept, and call save_memories with the durable facts worth keeping for future conversations: the user's name, how to address them, their timezone and location, preferences, ongoing projects, decisions made, recurring context.
Save only what the user said about themselves in their own words (the "User:" lines); the assistant's lines are there to make sense of them and are never a source of facts about the user.
Do not save: one-off requests or chatter, things only true for this conversation, what the assistant said about itself, facts already kept (unless they changed), and never passwords, tokens, keys, card or account numbers.
When a fact updates or contradicts a kept one ("moved to Lisbon" vs "lives in Porto"), save the new fact and list the old one's id in "replaces". Each text is one short sentence in the third person. When there is nothing new, call save_memories with an empty list.`;

const answer = z.object({
  memories: z
    .array(
      z.object({
        text: z.string().trim().min(1).max(MAX_TEXT),
        kind: z.enum(KINDS).optional(),
        replaces: z.array(z.string()).max(MAX_MEMORIES).optional(),
      }),
    )
    .max(MAX_MEMORIES),
});

export interface ExtractDeps {
  store: Pick<Store, "memories" | "sessions" | "requests" | "outbox" | "steps">;
  model: Model;
  /** MEMORY_MODEL, resolved to a model id. */
  modelName: string;
  ids: Ids;
  log: Logger;
  /** The session's budget (SESSION_TOKEN_BUDGET, SESSION_COST_BUDGET_USD): a spent session extracts nothing. */
  budget?: SessionBudget;
  /** The daily quotas: extraction spends on the task owner's behalf, so it is checked and counted like their calls. */
  quotas?: Quotas;
}

/**
 * Runs one extraction job: reads the task's conversation (the user's own words and the agents' replies to them,
 * the newest TRANSCRIPT_CHARS) and the user's memories, asks the model with a forced save_memories call, and
 * returns the changes to write. A trivial task gives null without a model call; an answer that does not match
 * the schema, or holds only secrets and repeats, gives no memories (logged). A failed model call throws, so
 * the job is retried.
 */
export async function extractMemories(deps: ExtractDeps, job: MemoryJob): Promise<MemoryChanges | null> {
  const { store, log } = deps;
  const transcript = await transcriptOf(store, job);
  if (transcript === null) return null;
  // Extraction's calls count against the conversation's budget like its agents' do.
  const over = deps.budget ? overBudget(await store.sessions.usage(job.sessionKey), deps.budget) : null;
  if (over) {
    log.info({ task: job.taskId }, "memory extraction skipped: the conversation's budget is spent");
    return null;
  }
  const existing = (await store.memories.list(job.userId)).slice(-100);
  const kept = existing.length ? existing.map((m) => `[${m.id}] ${m.text}`).join("\n") : "(none yet)";
  const request: ModelRequest = {
    model: deps.modelName,
    system: PROMPT,
    messages: [{ role: "user", content: [{ type: "text", text: `<conversation>\n${transcript}\n</conversation>\n\n<kept_memories>\n${kept}\n</kept_memories>` }] }],
    tools: [SPEC],
    toolChoice: { name: SAVE_MEMORIES },
    maxTokens: 1024,
  };
  const held = await deps.quotas?.hold(job.userId, job.sessionKey, request);
  if (held?.status === "refused") {
    log.info({ task: job.taskId, limit: held.refusal.limit }, `memory extraction skipped: ${held.refusal.limit} reached`);
    return null;
  }
  const response = await deps.model.complete(request).catch(async (error: unknown) => {
    await held?.release();
    throw error;
  });
  await held?.settle(response.usage.costNanoUsd ?? 0);
  const usage = {
    sessionKey: job.sessionKey,
    inputTokens: response.usage.inputTokens,
    outputTokens: response.usage.outputTokens,
    cacheReadTokens: response.usage.cacheReadTokens ?? 0,
    cacheWriteTokens: response.usage.cacheWriteTokens ?? 0,
    costNanoUsd: response.usage.costNanoUsd ?? 0,
  };
  const call = response.content.find((b) => b.type === "tool_use" && b.name === SAVE_MEMORIES);
  const parsed = answer.safeParse(call && call.type === "tool_use" ? call.input : undefined);
  if (!parsed.success) {
    log.warn({ task: job.taskId, problem: parsed.error.issues[0]?.message ?? "no save_memories call" }, "memory extraction answer was malformed; nothing stored");
    return { usage };
  }
  return { ...decide(parsed.data.memories, existing, deps.ids, log), usage };
}

/** The new facts to add and the kept ones they replace; secrets and repeats are dropped. */
function decide(found: z.infer<typeof answer>["memories"], existing: readonly MemoryRecord[], ids: Ids, log: Logger): Pick<MemoryChanges, "add" | "remove"> {
  const mine = new Set(existing.map((m) => m.id));
  const known = new Set(existing.map((m) => normal(m.text)));
  const add: NonNullable<MemoryChanges["add"]> = [];
  const remove = new Set<string>();
  let secrets = 0;
  for (const memory of found) {
    if (holdsSecret(memory.text)) {
      secrets++;
      continue;
    }
    const replaced = (memory.replaces ?? []).filter((id) => mine.has(id));
    if (known.has(normal(memory.text)) && replaced.length === 0) continue;
    known.add(normal(memory.text));
    for (const id of replaced) remove.add(id);
    add.push({ id: ids.next("mem"), text: memory.text, kind: memory.kind ?? null });
  }
  if (secrets > 0) log.warn({ dropped: secrets }, "memory extraction proposed secrets; they were not stored");
  return { add, remove: [...remove] };
}

/**
 * The task's conversation as its owner had it: their own messages and the agents' replies to those, never anyone
 * else's words (a group's other members'), so only what the owner said can become the owner's memories. Null when
 * there is nothing worth reading (only commands, a few words).
 */
async function transcriptOf(store: Pick<Store, "requests" | "outbox" | "steps">, job: MemoryJob): Promise<string | null> {
  const requests = (await store.requests.ofSession(job.sessionKey)).filter((r) => r.taskId === job.taskId && r.kind === "message" && r.userId === job.userId);
  const userWords = requests.reduce((n, r) => n + r.text.trim().length, 0);
  if (userWords < TRIVIAL_CHARS) return null;
  const lines: Array<{ at: number; line: string }> = [];
  for (const request of requests) {
    lines.push({ at: request.createdAt, line: `User: ${request.text}` });
    for (const reply of await store.outbox.ofRequest(request.id)) {
      if (reply.kind === "message") lines.push({ at: reply.createdAt, line: `${agentLabel(reply.agent)}: ${reply.text}` });
    }
  }
  const text = lines
    .sort((a, b) => a.at - b.at)
    .map((l) => l.line)
    .join("\n");
  return text.length > TRANSCRIPT_CHARS ? `…${text.slice(-TRANSCRIPT_CHARS)}` : text;
}

function normal(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, " ")
    .trim();
}

/** Whether a failed extraction is worth retrying (the model was unreachable or overloaded) or never will work. */
export function retryable(error: unknown): boolean {
  return !(error instanceof ModelError) || error.status === null || error.status === 429 || error.status >= 500;
}
