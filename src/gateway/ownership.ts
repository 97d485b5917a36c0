// One owner per conversation, from the moment its first message is accepted (Store.conversationOwner): in a group
// or a channel thread, only the owner talks to the agents, cancels or resets; the others are told the chat is busy.
// Decided when a message is stored (atomically, by the store) and checked again when a stored request runs.
import type { OwnerRule, RequestRecord, Store } from "../store/store.js";
import { anyoneMay, parseCommand, type ChatCommand } from "./commands.js";
import type { InboundMessage, SubmitResult } from "./types.js";

export const BUSY = "Sorry, I'm in the middle of a task for someone else in this chat. Please wait until it finishes, or ask them to /cancel it.";

export type Admission =
  /** Store it, under `rule` (absent: anyone may). */
  { admitted: true; command: ChatCommand | null; rule?: OwnerRule } | { admitted: false; result: Extract<SubmitResult, { status: "refused" | "ignored" }> };

/**
 * Whether `message` may enter its conversation owned by `owner` (RequestStore.conversationOwner), as far as can be
 * told before storing it; the store decides again, in the transaction that stores it, under the returned rule (two
 * members writing at once: one of them becomes the owner).
 */
export function admission(message: InboundMessage, owner: string | null): Admission {
  // A lone "stop" cancels only where someone's task is under way.
  const command = parseCommand(message.text, owner !== null);
  const addressed = message.addressed ?? true;
  if (command !== null && anyoneMay(command)) return { admitted: true, command };
  if (owner !== null && owner !== message.userId) return { admitted: false, result: refusal(addressed, command) };
  // Chatter not addressed to the bot reaches the agents only from the conversation's owner.
  if (owner === null && !addressed && !command) return { admitted: false, result: { status: "ignored" } };
  return { admitted: true, command, rule: addressed || command ? "mine-or-free" : "mine" };
}

/** What the sender of a message the conversation's owner rules keep out is told (chatter is ignored quietly). */
export function refusal(addressed: boolean, command: ChatCommand | null): Extract<SubmitResult, { status: "refused" | "ignored" }> {
  return addressed || command ? { status: "refused", text: BUSY } : { status: "ignored" };
}

/**
 * A stored message, /cancel or /reset that is about to run: still its sender's to run? Another member may have
 * become the owner since it was stored (when two wrote at once, or it waited behind a task that someone else started).
 */
export async function mayRun(store: Pick<Store, "requests" | "tasks">, request: RequestRecord): Promise<boolean> {
  const owner = await store.requests.conversationOwner(request.sessionKey);
  return owner === null || owner === request.userId;
}

/**
 * The conversation `userId` owns in a place (a channel and its threads), if any: their running task's, else (before
 * its first commit) the one their first message is waiting or running in. Newest first.
 */
export async function conversationOf(store: Pick<Store, "requests" | "tasks">, keyPrefix: string, userId: string): Promise<string | null> {
  const task = await store.tasks.activeOf(keyPrefix, userId);
  if (task) return task.sessionKey;
  const inPlace = (key: string) => key === keyPrefix || key.startsWith(`${keyPrefix}:`);
  const waiting = (await store.requests.unfinished()).filter((r) => r.kind === "message" && r.userId === userId && inPlace(r.sessionKey));
  for (const request of waiting.reverse()) {
    if ((await store.requests.conversationOwner(request.sessionKey)) === userId) return request.sessionKey;
  }
  return null;
}
