import { createHash } from "node:crypto";

/**
 * A stable hash of a tool call's input: keys sorted at every level, so `{a:1,b:2}` and `{b:2,a:1}` are one
 * input. An approval is bound to it: the same tool_use id with another input is another call.
 */
export function inputHash(input: unknown): string {
  return createHash("sha256").update(canonical(input)).digest("hex");
}

function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`);
    return `{${entries.join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}
