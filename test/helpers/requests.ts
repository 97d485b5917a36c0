import { systemText, type MessagesRequest } from "../fakes/anthropic/server.js";

/** The tool results of the newest message of a Messages API request, as the model sees them. */
export function toolResults(req: MessagesRequest): Array<{ id: string | undefined; content: string; error: boolean }> {
  const last = req.messages[req.messages.length - 1]!;
  return (last.content as Array<{ type: string; tool_use_id?: string; content?: unknown; is_error?: boolean }>)
    .filter((b) => b.type === "tool_result")
    .map((b) => ({ id: b.tool_use_id, content: String(b.content), error: b.is_error === true }));
}

/** The same, without the tool_use ids (for results of calls whose ids the fake made up). */
export function resultTexts(req: MessagesRequest): Array<{ content: string; error: boolean }> {
  return toolResults(req).map(({ content, error }) => ({ content, error }));
}

/** Which agent a request is from, by its system prompt ("main" for the main agent). */
export function speaker(req: MessagesRequest): string {
  return /You are the agent "([^"]+)"/.exec(systemText(req))?.[1] ?? "main";
}
