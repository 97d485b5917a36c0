import type { SchemaChecker } from "../../catalog/schema-checker.js";
import type { ToolSpec } from "../../llm/types.js";
import type { StackFrame } from "../frame.js";
import type { Tool } from "./tool.js";

export const REPORT_BACK = "report_back";
export const MAX_REPORT_ATTEMPTS = 3;

/**
 * Offered instead of `complete` to a frame that has an output_schema. Its input_schema IS that schema,
 * so the model fills in the structured result as the call's arguments. Intercepted by the executor.
 */
export const reportBackTool: Tool = {
  spec: {
    name: REPORT_BACK,
    description: "Finish your task by reporting the structured result to the agent that called you.",
    input_schema: { type: "object" },
  },
  idempotent: true,
  run: () => Promise.reject(new Error("report_back is intercepted by the executor and never runs")),
};

/** The report_back spec a frame sees: its own schema as the input schema. */
export function reportBackSpec(frame: StackFrame): ToolSpec {
  const { $schema: _dialect, ...schema } = frame.outputSchema ?? { type: "object" };
  return {
    name: REPORT_BACK,
    description:
      "Finish your task by reporting the result to the agent that called you. The arguments ARE the result and must " +
      "match this schema exactly; if they do not, you get the list of violations and can call it again.",
    input_schema: schema as ToolSpec["input_schema"],
  };
}

export type ReportCheck = { ok: true; value: Record<string, unknown> } | { ok: false; violations: string[] };

/** Checks report_back's arguments against the frame's schema, on the schema worker (never on the event loop). */
export async function checkReport(frame: StackFrame, input: Record<string, unknown>, schemas: SchemaChecker): Promise<ReportCheck> {
  const check = await schemas.check(frame.outputSchema, input);
  return check.ok ? { ok: true, value: input } : check;
}
