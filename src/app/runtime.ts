import type { Logger } from "pino";
import type { LiveCatalog } from "../catalog/live.js";
import type { WorkerSchemaChecker } from "../catalog/schema-checker.js";
import type { Config } from "../config.js";
import { callEstimate } from "../llm/estimate.js";
import type { Model } from "../llm/model.js";
import { PriceTable } from "../llm/prices.js";
import { CallLimiter } from "../runtime/call-limiter.js";
import { systemTimers, type Ids } from "../runtime/deps.js";
import type { RuntimeDeps } from "../runtime/orchestrator.js";
import { Quotas } from "../runtime/quota.js";
import { AgentStackManager } from "../runtime/stack-manager.js";
import type { ToolRegistry } from "../runtime/tools/registry.js";
import type { Store } from "../store/store.js";
import type { Telemetry } from "../telemetry/telemetry.js";
import type { WorkspaceStart } from "../workspace/start.js";

export interface RuntimeParts {
  store: Store;
  model: Model;
  tools: ToolRegistry;
  catalog: LiveCatalog;
  schemas: WorkerSchemaChecker;
  ids: Ids;
  log: Logger;
  telemetry: Telemetry;
  workspace: Pick<WorkspaceStart, "workspaces">;
}

/** What the engine runs with: its parts, the settings of config.ts it reads (limits, compaction, budgets) and the quotas. */
export function createRuntime(config: Config, { store, model, tools, catalog, schemas, ids, log, telemetry, workspace }: RuntimeParts): RuntimeDeps {
  return {
    store,
    stacks: new AgentStackManager(store),
    model,
    tools,
    catalog: () => catalog.current,
    settings: {
      defaultModel: config.ANTHROPIC_MODEL,
      maxIterations: config.MAX_ITERATIONS,
      callDepthMax: config.AGENT_CALL_DEPTH_MAX,
      callTimeoutMs: config.AGENT_CALL_TIMEOUT_MS,
      compactionThreshold: config.COMPACTION_THRESHOLD,
      compactionKeepTokens: config.COMPACTION_KEEP_TOKENS,
      toolResultMaxTokens: config.TOOL_RESULT_MAX_TOKENS,
      contextTokens: config.MODEL_CONTEXT_TOKENS,
      approvalTimeoutMs: config.APPROVAL_TIMEOUT,
      handbackNotice: config.HANDBACK_NOTICE,
      memory: config.MEMORY,
      sessionTokenBudget: config.SESSION_TOKEN_BUDGET,
      sessionCostBudgetUsd: config.SESSION_COST_BUDGET_USD,
      files: { maxFileBytes: config.MAX_FILE_BYTES, maxSessionBytes: config.MAX_SESSION_FILE_BYTES },
    },
    limiter: new CallLimiter(config.AGENT_CONCURRENT_CALLS_MAX, config.AGENT_CALL_QUEUE_MAX),
    timers: systemTimers,
    schemas,
    ids,
    log,
    observer: telemetry,
    ...(workspace.workspaces ? { placeFile: workspace.workspaces.placeFile.bind(workspace.workspaces) } : {}),
    quotas: new Quotas({
      store,
      settings: {
        userDailyMessages: config.USER_DAILY_MESSAGES,
        userDailyUsd: config.USER_DAILY_USD,
        chatDailyUsd: config.CHAT_DAILY_USD,
        exemptUsers: config.QUOTA_EXEMPT_USERS,
      },
      now: Date.now,
      // A user's day ends at their midnight: the zone they set with /timezone, else DEFAULT_TIMEZONE, else UTC.
      zoneOf: async (userId) => (await store.schedules.timezone(userId)) ?? config.DEFAULT_TIMEZONE ?? null,
      estimate: callEstimate(new PriceTable(config.MODEL_PRICES), config.ANTHROPIC_MAX_TOKENS),
      log: log.child({ part: "quota" }),
      refused: (limit, place) => telemetry.quotaRefused(limit, place),
    }),
  };
}
