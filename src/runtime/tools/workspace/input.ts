// Checking a workspace tool's input the way Claude Code's tools take it: numbers and booleans may arrive as
// strings ("20", "true"), unknown keys are ignored, and a bad value is a tool error naming the field.
import { z } from "zod";
import { fail, type ToolOutput } from "../tool.js";

/** A whole number ≥ `min`, also written as a string of digits. */
export const count = (min: number) => z.preprocess((v) => (typeof v === "string" && /^\s*\d+\s*$/.test(v) ? Number(v) : v), z.number().int().min(min));

/** A boolean, also written "true" or "false". */
export const flag = z.preprocess((v) => (v === "true" ? true : v === "false" ? false : v), z.boolean());

export function parseInput<T>(tool: string, schema: z.ZodType<T>, raw: Record<string, unknown>): { ok: true; value: T } | { ok: false; output: ToolOutput } {
  const parsed = schema.safeParse(raw);
  if (parsed.success) return { ok: true, value: parsed.data };
  const issue = parsed.error.issues[0]!;
  const field = issue.path.join(".") || "input";
  return { ok: false, output: fail(`${tool}: ${field}: ${issue.message}`) };
}
