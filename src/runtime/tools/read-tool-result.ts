import { z } from "zod";
import { charBoundary, formatCount as n, MIN_SHOWN, NOTE_ROOM, READ_TOOL_RESULT, resultChars } from "../result-bound.js";
import { fail, type Tool, type ToolOutput } from "./tool.js";

const input = z.object({
  tool_use_id: z.string().trim().min(1),
  offset: z.number().int().min(0).default(0),
});

/**
 * Reads a part of one of the frame's own earlier tool results, whole in the context log, that the live history
 * shows cut (result-bound.ts). Each part fits the bound and says where the next one starts.
 */
export const readToolResultTool: Tool = {
  spec: {
    name: READ_TOOL_RESULT,
    description:
      "Read more of one of your earlier tool results that was cut because it was long. Its note gives the tool_use_id " +
      "and the offset to continue from; each call returns the next part and says where the one after starts.",
    input_schema: {
      type: "object",
      properties: {
        tool_use_id: { type: "string", description: "The id named in the cut note." },
        offset: { type: "integer", minimum: 0, description: "The character to start from, as the note says. Default 0." },
      },
      required: ["tool_use_id"],
    },
  },
  idempotent: true,
  async run(raw, ctx): Promise<ToolOutput> {
    const parsed = input.safeParse(raw);
    if (!parsed.success) return fail(`${READ_TOOL_RESULT} needs a "tool_use_id" (as the cut note gives it) and optionally an "offset", a whole number ≥ 0`);
    const { tool_use_id: id, offset } = parsed.data;
    const whole = await ctx.storedResult(id);
    if (whole === null) return fail(`there is no tool result with tool_use_id "${id}" in ${ctx.frame.agentName}'s history; use the id the cut note gives`);
    if (offset >= whole.length) return fail(`offset ${offset} is past the end: that result has ${n(whole.length)} characters`);
    const end = charBoundary(whole, Math.min(whole.length, offset + Math.max(resultChars(ctx.settings) - NOTE_ROOM, MIN_SHOWN)));
    const where = `Characters ${n(offset)} to ${n(end)} of ${n(whole.length)}`;
    const next =
      end < whole.length
        ? `${where}. ${n(whole.length - end)} more: ${READ_TOOL_RESULT} {"tool_use_id": "${id}", "offset": ${end}}.`
        : `${where}: the end of the result.`;
    return { content: `${whole.slice(offset, end)}\n\n[${next}]` };
  },
};
