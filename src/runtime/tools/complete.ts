import type { Tool } from "./tool.js";

export const COMPLETE = "complete";

/** Offered to every child, never to main. The executor intercepts it; run() is never reached. */
export const completeTool: Tool = {
  spec: {
    name: COMPLETE,
    description:
      "Finish your task and hand the conversation back to the agent that called you. `result` is what they receive: " +
      "make it complete and self-contained (the user does not see it directly).",
    input_schema: {
      type: "object",
      properties: { result: { type: "string", description: "Your final result for the caller." } },
      required: ["result"],
    },
  },
  idempotent: true,
  run: () => Promise.reject(new Error("complete is intercepted by the executor and never runs")),
};
