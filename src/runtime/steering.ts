import type { TurnDeps } from "./executor.js";
import { fileRefs } from "./file-blocks.js";
import { addUserText } from "./messages.js";
import { placeReceived } from "./received-files.js";
import type { StackFrame } from "./frame.js";

/**
 * MID_TURN=steer: messages the task's owner sent while the frame worked join it at its next model call, after
 * the tool results of the step (so "no, the other file" reaches the agent before it goes on). Their requests
 * are closed in the same step that writes their text, so each is read exactly once: by this turn, or, when no
 * further model call comes, as the next request in the queue.
 */
export async function joinSteering(frame: StackFrame, deps: TurnDeps): Promise<void> {
  const { journal, steering } = deps;
  if (!steering || frame.mode !== "interactive" || deps.depth === undefined || !journal.requestId || !journal.taskId) return;
  const last = frame.history[frame.history.length - 1];
  // Only after tool results: a reply being written for the user is not interrupted by the next message.
  if (last?.role !== "user" || !last.content.some((b) => b.type === "tool_result")) return;
  const waiting = (await steering(journal.sessionKey, journal.requestId)).filter((r) => !journal.closes(r.id));
  if (waiting.length === 0) return;
  // With their files, placed in the workspace like a turn's own message's.
  for (const request of waiting) addUserText(frame, journal, request.text, await placeReceived(deps, journal.writer, await fileRefs(deps.store, request.id)));
  journal.stage({ requestsClosed: waiting.map((r) => ({ id: r.id, status: "done" as const, taskId: journal.taskId })) });
  deps.log.info({ requests: waiting.map((r) => r.id) }, "messages sent during the turn joined it (MID_TURN=steer)");
}
