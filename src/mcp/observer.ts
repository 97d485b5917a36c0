// What the MCP client reports to whoever watches it (metrics, src/telemetry): each call per server, and each server's
// state. It only observes.

export type McpCallOutcome = "ok" | "error" | "timeout" | "cancelled" | "unavailable";

export interface McpObserver {
  /** A tools/call of `server` ended (`error`: the tool's error result, or a failure of the call). */
  call(server: string, outcome: McpCallOutcome, seconds: number): void;
  /** `server` is connected now with `tools` tools, or not (tools 0). */
  state(server: string, connected: boolean, tools: number): void;
}

export const NO_MCP_OBSERVER: McpObserver = { call: () => {}, state: () => {} };
