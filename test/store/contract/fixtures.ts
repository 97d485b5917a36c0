// Records for the Store contract suite, and the few multi-call set-ups many of its tests share. Everything
// goes through the Store interface, awaited, so the suite runs unchanged once the interface is asynchronous.
import type { FrameRecord, LogEntryInput, LogType, NewApproval, NewRequest, OutboundInput, Store } from "../../../src/store/store.js";
import type { StoreBackend } from "./backends.js";
import { commitStep } from "../../helpers/steps.js";

/** A hand-driven clock: every timestamp the store writes comes from here. */
export class Clock {
  constructor(public t = 1_000_000) {}
  readonly now = (): number => this.t;
  advance(ms: number): number {
    this.t += ms;
    return this.t;
  }
}

/** What each test sees: the backend, its store (replaced by a reopen) and the clock that store reads. */
export interface ContractContext {
  backend: StoreBackend;
  store: Store;
  clock: Clock;
}

export const ALICE = "telegram:alice";
export const BOB = "telegram:bob";

export function frame(frameId: string, over: Partial<FrameRecord> = {}): FrameRecord {
  return {
    frameId,
    agentName: "main",
    agentType: "main",
    definitionName: null,
    systemPrompt: "You help.",
    model: "claude-test",
    environment: {},
    iteration: 0,
    maxIterations: 10,
    effectiveTools: ["use_skill"],
    isSkillAgent: false,
    parentToolUseId: null,
    agentSessionId: `as-${frameId}`,
    mode: "interactive",
    callChain: [],
    runningToolUseId: null,
    outputSchema: null,
    reportAttempts: 0,
    contextTokens: 0,
    approvalTools: [],
    ...over,
  };
}

export function newRequest(id: string, sessionKey: string, over: Partial<NewRequest> = {}): NewRequest {
  return { id, sessionKey, externalId: `ext-${id}`, kind: "message", userId: ALICE, text: `text of ${id}`, ...over };
}

export function logEntry(type: LogType, payload: unknown, over: Partial<LogEntryInput> = {}): LogEntryInput {
  return { taskId: null, requestId: null, frameId: null, agentSessionId: null, type, payload, ...over };
}

export function outbound(id: string, over: Partial<OutboundInput> = {}): OutboundInput {
  return { id, requestId: null, taskId: null, agent: "main", depth: 0, text: `reply ${id}`, kind: "message", ...over };
}

export function newApproval(id: string, over: Partial<NewApproval> = {}): NewApproval {
  return {
    id,
    taskId: null,
    requestId: null,
    frameId: "f-main",
    toolUseId: `toolu_${id}`,
    toolName: "http_request",
    input: { method: "POST", url: "https://example.test/x" },
    agent: "main",
    ownerId: ALICE,
    timeoutMs: 60_000,
    ...over,
  };
}

let sessionIds = 0;
/** A fresh main agent session id per call, for `store.session`. */
export const freshAgentSessionId = (): string => `as-main-${++sessionIds}`;

/**
 * The start of a turn as the runtime writes it: the session, the request that came in, and a step creating
 * its task (running) with the request running under it.
 */
export async function startTask(store: Store, sessionKey: string, ids: { task: string; request: string; owner?: string; frames?: FrameRecord[] }): Promise<void> {
  const owner = ids.owner ?? ALICE;
  await store.sessions.open(sessionKey, freshAgentSessionId);
  const inserted = await store.requests.insert(newRequest(ids.request, sessionKey, { userId: owner }));
  if (inserted.status !== "inserted") throw new Error(`startTask: request ${ids.request} was ${inserted.status}`);
  await commitStep(store, {
    sessionKey,
    taskCreated: { id: ids.task, ownerId: owner, requestId: ids.request },
    request: { id: ids.request, status: "running", taskId: ids.task },
    framesPushed: ids.frames ?? [],
  });
}

/** Everything a step can write for session `key`: compared before and after a commit that must write nothing. */
export async function everythingOf(store: Store, key: string) {
  return {
    log: await store.steps.log(key),
    frames: await store.steps.frames(key),
    tasks: await store.tasks.ofSession(key),
    requests: await store.requests.ofSession(key),
    usage: await store.sessions.usage(key),
    session: await store.sessions.find(key),
    pending: await store.outbox.pending(),
    approvals: await store.approvals.pending(key),
    unfinished: await store.requests.unfinished(),
  };
}
