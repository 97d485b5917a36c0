import type { Config } from "../config.js";
import { createEgress } from "../net/egress.js";
import { randomIds, type Ids } from "../runtime/deps.js";
import { createHttpRequestTool } from "../runtime/tools/http-request.js";
import { ToolRegistry } from "../runtime/tools/registry.js";
import { sendFileTool } from "../runtime/tools/send-file.js";
import { SCHEDULE_TOOLS, scheduleTools } from "../runtime/tools/schedules.js";
import { resolveModel } from "../runtime/tools/spawn.js";
import { WEB_SEARCH, webSearchTool } from "../runtime/tools/web-search.js";
import { WEB_FETCH, webFetchTool } from "../runtime/tools/web-fetch.js";
import { WORKSPACE_TOOLS } from "../runtime/tools/workspace/index.js";
import { memoryTools } from "../runtime/memory/tools.js";
import type { McpManager } from "../mcp/manager.js";
import type { Store } from "../store/store.js";
import { WORKSPACE_OFF, type WorkspaceStart } from "../workspace/start.js";

/**
 * The tools this gateway offers: the stack's own plus those switched on in the config, and how to switch on the
 * others. createApp registers them; `npm run skills` checks whitelists against the same list.
 */
export function createTools(
  config: Config,
  store?: Store,
  ids: Ids = randomIds,
  mcp?: McpManager,
  onScheduled?: () => void,
  workspace: Pick<WorkspaceStart, "tools" | "off"> & Partial<Pick<WorkspaceStart, "workspaces">> = { tools: [], off: {} },
  traceparent?: (sessionKey: string) => string | undefined,
): { registry: ToolRegistry; off: Record<string, string> } {
  const egress = () => createEgress({ allow: config.HTTP_REQUEST_ALLOW, maxBytes: config.HTTP_REQUEST_MAX_BYTES, timeoutMs: config.HTTP_REQUEST_TIMEOUT_MS });
  const storeOf = () => {
    if (!store) throw new Error("the memory, scheduling and send_file tools need the gateway's store");
    return store;
  };
  return {
    registry: new ToolRegistry(
      [
        ...(config.HTTP_REQUEST_TOOL ? [createHttpRequestTool(egress())] : []),
        ...(config.MEMORY ? memoryTools(storeOf, ids) : []),
        ...(config.SCHEDULES
          ? scheduleTools({
              store: storeOf,
              ids,
              now: Date.now,
              maxPerUser: config.SCHEDULE_MAX_PER_USER,
              defaultZone: config.DEFAULT_TIMEZONE,
              onScheduled,
              traceparent,
            })
          : []),
        ...(config.WEB_FETCH
          ? [
              webFetchTool({
                egress: createEgress({ allow: config.HTTP_REQUEST_ALLOW, maxBytes: config.WEB_FETCH_MAX_BYTES, timeoutMs: config.HTTP_REQUEST_TIMEOUT_MS }),
                model: resolveModel(config.WEB_FETCH_MODEL, config.ANTHROPIC_MODEL),
              }),
            ]
          : []),
        ...(config.WEB_SEARCH ? [webSearchTool({ maxUses: config.WEB_SEARCH_MAX_USES })] : []),
        ...workspace.tools,
        sendFileTool({ store: storeOf, workspaceFor: workspace.workspaces?.resolver ?? null }),
      ],
      mcp && mcp.servers().length > 0 ? mcp : null,
    ),
    off: {
      ...(config.HTTP_REQUEST_TOOL ? {} : { http_request: "HTTP_REQUEST_TOOL=on turns it on" }),
      ...(config.MEMORY ? {} : { remember: "MEMORY=on turns it on", recall: "MEMORY=on turns it on", forget: "MEMORY=on turns it on" }),
      ...(config.SCHEDULES ? {} : Object.fromEntries(SCHEDULE_TOOLS.map((name) => [name, "SCHEDULES=on turns it on"]))),
      ...(config.WEB_FETCH ? {} : { [WEB_FETCH]: "WEB_FETCH=on turns it on" }),
      ...(config.WEB_SEARCH ? {} : { [WEB_SEARCH]: "WEB_SEARCH=on turns it on" }),
      ...(config.WORKSPACE ? workspace.off : Object.fromEntries(WORKSPACE_TOOLS.map((tool) => [tool, WORKSPACE_OFF]))),
    },
  };
}
