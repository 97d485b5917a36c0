// A conversation waiting for approval, written through the store with its clock set to `at`: how the admin tests
// get an approval that has waited for hours without waiting for it.
import { SqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import type { FrameRecord } from "../../src/store/store.js";
import { commitStep } from "../helpers/steps.js";

export interface WaitingApproval {
  sessionKey: string;
  /** When it was all written (epoch ms). */
  at: number;
  /** Ids of the approval, its request, task and prompt get this suffix. */
  id: string;
  owner?: string;
  input?: Record<string, unknown>;
  /** The interview skill on main asked (else main itself). */
  skill?: boolean;
}

/**
 * The owner's message started a task; the stack (main, or main and the interview skill) asked to run `transfer`;
 * the approval prompt was committed and never delivered.
 */
export async function seedWaitingApproval(dbFile: string, w: WaitingApproval): Promise<void> {
  const store = new SqliteStore(dbFile, () => w.at);
  const owner = w.owner ?? "telegram:1001";
  const top = w.skill ? "skill:interview" : "main";
  try {
    await store.sessions.open(w.sessionKey, () => `as_main_${w.id}`);
    await store.requests.insert({ id: `req_${w.id}`, sessionKey: w.sessionKey, externalId: `m_${w.id}`, kind: "message", userId: owner, text: "plan it" });
    await commitStep(store, {
      sessionKey: w.sessionKey,
      taskCreated: { id: `task_${w.id}`, ownerId: owner, requestId: `req_${w.id}` },
      framesPushed: [frame(`f_main_${w.id}`, "main", "main"), ...(w.skill ? [frame(`f_skill_${w.id}`, "skill:interview", "skill")] : [])],
      task: { id: `task_${w.id}`, status: "waiting_approval" },
      request: { id: `req_${w.id}`, status: "done", taskId: `task_${w.id}` },
      approvalsCreated: [
        {
          id: `ap_${w.id}`,
          taskId: `task_${w.id}`,
          requestId: `req_${w.id}`,
          frameId: w.skill ? `f_skill_${w.id}` : `f_main_${w.id}`,
          toolUseId: `toolu_${w.id}`,
          toolName: "transfer",
          input: w.input ?? { amount: 900 },
          agent: top,
          ownerId: owner,
          timeoutMs: 24 * 3_600_000,
        },
      ],
      outbound: [
        {
          id: `out_${w.id}`,
          approvalId: `ap_${w.id}`,
          requestId: `req_${w.id}`,
          taskId: `task_${w.id}`,
          agent: top,
          depth: w.skill ? 2 : 1,
          text: "approve?",
          kind: "notice",
        },
      ],
    });
  } finally {
    await store.close();
  }
}

function frame(frameId: string, agentName: string, agentType: FrameRecord["agentType"]): FrameRecord {
  return {
    frameId,
    agentName,
    agentType,
    definitionName: agentType === "main" ? null : "interview",
    systemPrompt: "You help.",
    model: "claude-test",
    environment: {},
    iteration: 2,
    maxIterations: 25,
    effectiveTools: ["transfer"],
    isSkillAgent: agentType === "skill",
    parentToolUseId: agentType === "main" ? null : "toolu_skill",
    agentSessionId: `as_${frameId}`,
    mode: "interactive",
    callChain: [],
    runningToolUseId: null,
    outputSchema: null,
    reportAttempts: 0,
    contextTokens: 0,
    approvalTools: [],
  };
}
