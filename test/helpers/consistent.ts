// What must hold in a conversation whatever stopped its task (a budget, a quota): nothing left running, every agent
// session closed once, every tool call of every agent answered.
import { expect } from "vitest";
import { rebuildHistory, unresolvedToolUses } from "../../src/runtime/history.js";
import type { Store } from "../../src/store/store.js";

export async function expectSettled(store: Pick<Store, "steps" | "requests" | "tasks">, key: string): Promise<void> {
  expect(await store.steps.frames(key)).toEqual([]);
  expect(await store.requests.unfinished()).toEqual([]);
  expect(await store.tasks.active(key)).toBeNull();
  const log = await store.steps.log(key);
  const started = log.filter((e) => e.type === "agent_session").map((e) => e.agentSessionId);
  const ended = log.filter((e) => e.type === "agent_session_complete").map((e) => e.agentSessionId);
  const byId = (x: string | null, y: string | null) => (String(x) < String(y) ? -1 : 1);
  expect([...ended].sort(byId)).toEqual([...started].sort(byId));
  for (const id of new Set(log.map((e) => e.agentSessionId).filter((a): a is string => a !== null))) {
    expect(unresolvedToolUses(rebuildHistory(await store.steps.history(key, id))), id).toEqual([]);
  }
}
