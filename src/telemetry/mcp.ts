import type { McpObserver } from "../mcp/observer.js";
import type { Metrics } from "./metrics.js";

/** MCP calls and server states as Prometheus metrics, per server (the servers are the admin's, a bounded set). */
export function mcpMetrics(metrics: Metrics): McpObserver {
  return {
    call(server, outcome, seconds) {
      metrics.mcpCalls.inc({ server, outcome });
      if (outcome !== "unavailable") metrics.mcpCallDuration.observe({ server }, seconds);
    },
    state(server, connected, tools) {
      metrics.mcpServerUp.set({ server }, connected ? 1 : 0);
      metrics.mcpTools.set({ server }, tools);
    },
  };
}
