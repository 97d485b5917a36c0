import type { Tool } from "../../src/runtime/tools/tool.js";

/**
 * A tool that says what its calls act on (the service and where it goes), as a shell or an MCP tool will: its
 * approval prompt leads with that.
 */
export function deployTool(): Tool {
  return {
    spec: { name: "deploy", description: "Deploys a service.", input_schema: { type: "object" } },
    idempotent: false,
    requiresApproval: true,
    approvalTarget: (input) => ({ text: `${String(input.service)} → ${String(input.target)}`, fields: ["service", "target"] }),
    run: async () => ({ content: "deployed" }),
  };
}

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

/**
 * A bank's tools: `transfer` needs its owner's approval, `balance` does not. Every run is recorded in `runs`,
 * as "transfer <amount>" or "balance".
 */
export function bankTools(): { runs: string[]; list: Tool[] } {
  const runs: string[] = [];
  const transfer: Tool = {
    spec: { name: "transfer", description: "Moves money.", input_schema: { type: "object" } },
    idempotent: false,
    requiresApproval: true,
    run: async (input) => {
      runs.push(`transfer ${String(input.amount)}`);
      return { content: `sent ${String(input.amount)}` };
    },
  };
  const balance: Tool = {
    spec: { name: "balance", description: "Reads the balance.", input_schema: { type: "object" } },
    idempotent: true,
    run: async () => {
      runs.push("balance");
      return { content: "100 EUR" };
    },
  };
  return { runs, list: [transfer, balance] };
}

/**
 * A tool whose run waits for the test (`started`, then `release()`): a turn stays in flight meanwhile. It ignores
 * its abort signal, as a tool that does not notice a cancel would.
 */
export function heldTool(name = "search_flights", answer = "3 flights to Lisbon") {
  let entered!: () => void;
  let release!: () => void;
  const started = new Promise<void>((r) => (entered = r));
  const done = new Promise<void>((r) => (release = r));
  const tool: Tool = {
    spec: { name, description: `The ${name} tool, held by the test.`, input_schema: { type: "object" } },
    idempotent: true,
    run: async () => {
      entered();
      await done;
      return { content: answer };
    },
  };
  return { tool, started, release };
}
