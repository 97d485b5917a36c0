import type { Tool } from "../../src/runtime/tools/tool.js";

/** A side-effecting tool that needs its owner's approval; every run is recorded in `runs`. */
export function transferTool(runs: string[]): Tool {
  return {
    spec: { name: "transfer", description: "Moves money.", input_schema: { type: "object" } },
    idempotent: false,
    requiresApproval: true,
    run: async () => {
      runs.push("sent");
      return { content: "sent" };
    },
  };
}
