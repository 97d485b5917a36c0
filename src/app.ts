import { join } from "node:path";
import type { Logger } from "pino";
import type { Catalog } from "./catalog/definition.js";
import { loadCatalog } from "./catalog/loader.js";
import type { Config } from "./config.js";
import { Gateway } from "./gateway/gateway.js";
import { AnthropicModel, UnconfiguredModel } from "./llm/anthropic.js";
import type { Model } from "./llm/model.js";
import { randomIds, type Ids } from "./runtime/deps.js";
import { Orchestrator, type RuntimeDeps } from "./runtime/orchestrator.js";
import { AgentStackManager } from "./runtime/stack-manager.js";
import { ToolRegistry } from "./runtime/tools/registry.js";
import { SqliteStore } from "./store/sqlite/sqlite-store.js";
import type { Store } from "./store/store.js";

export interface App {
  store: Store;
  catalog: Catalog;
  model: Model;
  gateway: Gateway;
  close(): Promise<void>;
}

/** The composition root shared by `npm start` and `npm run chat`: config → store → catalog → model → gateway. */
export function createApp(config: Config, log: Logger, ids: Ids = randomIds): App {
  const store = new SqliteStore(join(config.DATA_DIR, "switchboard.db"));
  const catalog = loadCatalog(config.SKILLS_DIR, config.AGENTS_DIR);
  for (const problem of catalog.problems) log.warn({ problem }, `skipped a definition: ${problem}`);
  log.info({ skills: [...catalog.skills.keys()], agents: [...catalog.agents.keys()] }, "catalog loaded");

  const model: Model = config.ANTHROPIC_API_KEY
    ? new AnthropicModel({
        apiKey: config.ANTHROPIC_API_KEY,
        baseURL: config.ANTHROPIC_BASE_URL,
        defaultModel: config.ANTHROPIC_MODEL,
        maxTokens: config.ANTHROPIC_MAX_TOKENS,
        maxRetries: config.ANTHROPIC_MAX_RETRIES,
      })
    : new UnconfiguredModel(config.ANTHROPIC_MODEL);
  if (!model.configured) log.warn("ANTHROPIC_API_KEY is not set: every message will be answered with setup instructions");

  const runtime: RuntimeDeps = {
    store,
    stacks: new AgentStackManager(store),
    model,
    tools: new ToolRegistry(),
    catalog: () => catalog,
    settings: { defaultModel: config.ANTHROPIC_MODEL, maxIterations: config.MAX_ITERATIONS },
    ids,
    log,
  };
  const orchestrator = new Orchestrator(runtime);
  const gateway = new Gateway({ store, model, orchestrator, runtime, ids, log });
  return {
    store,
    catalog,
    model,
    gateway,
    async close() {
      await gateway.stop();
      store.close();
    },
  };
}
