import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { loadCatalog } from "../../src/catalog/loader.js";
import { Gateway } from "../../src/gateway/gateway.js";
import type { OutboundMessage } from "../../src/gateway/types.js";
import { AnthropicModel, UnconfiguredModel } from "../../src/llm/anthropic.js";
import type { Model } from "../../src/llm/model.js";
import { createLogger, silentLogger } from "../../src/log.js";
import type { Ids } from "../../src/runtime/deps.js";
import { Orchestrator, type RuntimeDeps } from "../../src/runtime/orchestrator.js";
import { AgentStackManager } from "../../src/runtime/stack-manager.js";
import { ToolRegistry } from "../../src/runtime/tools/registry.js";
import type { Tool } from "../../src/runtime/tools/tool.js";
import { SqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import { startFakeAnthropic, type FakeAnthropic } from "../fakes/anthropic/server.js";

export function counterIds(): Ids {
  const counts = new Map<string, number>();
  return {
    next(prefix) {
      const n = (counts.get(prefix) ?? 0) + 1;
      counts.set(prefix, n);
      return `${prefix}_${n}`;
    },
  };
}

/** Writes skills/ and agents/ files under a temp dir; keys are paths like "skills/interview/SKILL.md". */
export function writeDefinitions(files: Record<string, string>): { root: string; skills: string; agents: string } {
  const root = mkdtempSync(join(tmpdir(), "switchboard-test-"));
  mkdirSync(join(root, "skills"));
  mkdirSync(join(root, "agents"));
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), content);
  }
  return { root, skills: join(root, "skills"), agents: join(root, "agents") };
}

export function skillFile(name: string, body: string, extra = ""): Record<string, string> {
  return { [`skills/${name}/SKILL.md`]: `---\nname: ${name}\ndescription: The ${name} skill for tests.\n${extra}---\n${body}\n` };
}

export function agentFile(name: string, body: string, extra = ""): Record<string, string> {
  return { [`agents/${name}.md`]: `---\nname: ${name}\ndescription: The ${name} agent for tests.\n${extra}---\n${body}\n` };
}

export interface HarnessOptions {
  files?: Record<string, string>;
  maxIterations?: number;
  tools?: Tool[];
  noApiKey?: boolean;
  /** Reuse a database file (to simulate a restart in-process). */
  dbFile?: string;
  fake?: FakeAnthropic;
}

/**
 * The real runtime and gateway wired like main.ts, with the real Anthropic SDK talking to the
 * strict fake over HTTP, a real SQLite store and a sink that records what a console user would see.
 */
export async function startHarness(options: HarnessOptions = {}) {
  const fake = options.fake ?? (await startFakeAnthropic());
  const defs = writeDefinitions(options.files ?? {});
  const dbFile = options.dbFile ?? join(defs.root, "data", "switchboard.db");
  const store = new SqliteStore(dbFile);
  const catalog = loadCatalog(defs.skills, defs.agents);
  const model: Model = options.noApiKey
    ? new UnconfiguredModel()
    : new AnthropicModel({ apiKey: "test-key", baseURL: fake.url, maxRetries: 0, defaultModel: "claude-test" });
  // TEST_LOG=debug shows the runtime's logs while debugging a test.
  const log = process.env.TEST_LOG ? createLogger(process.env.TEST_LOG) : silentLogger();
  const ids = counterIds();
  const runtime: RuntimeDeps = {
    store,
    stacks: new AgentStackManager(store),
    model,
    tools: new ToolRegistry(options.tools ?? []),
    catalog: () => catalog,
    settings: { defaultModel: "claude-test", maxIterations: options.maxIterations ?? 25 },
    ids,
    log,
  };
  const orchestrator = new Orchestrator(runtime);
  const gateway = new Gateway({ store, model, orchestrator, runtime, ids, log });
  const seen: OutboundMessage[] = [];
  gateway.register({ prefix: "console", deliver: async (m) => void seen.push(m) });
  let counter = 0;

  return {
    fake,
    store,
    gateway,
    runtime,
    catalog,
    dbFile,
    seen,
    /** Sends a message as a user would and returns what the chat showed in reply. */
    async send(text: string, opts: { session?: string; user?: string; id?: string } = {}): Promise<OutboundMessage[]> {
      const before = seen.length;
      gateway.submit({
        sessionKey: `console:${opts.session ?? "t"}`,
        messageId: opts.id ?? `m${++counter}`,
        userId: opts.user ?? "alice",
        text,
      });
      await gateway.idle();
      return seen.slice(before);
    },
    /** Texts shown in reply to one message, as "agent: text". */
    async say(text: string, opts: { session?: string; user?: string; id?: string } = {}): Promise<string[]> {
      return (await this.send(text, opts)).map((m) => `${m.agent}: ${m.text}`);
    },
    async close(keepFake = false) {
      await gateway.stop();
      store.close();
      if (!keepFake && !options.fake) await fake.close();
      rmSync(defs.root, { recursive: true, force: true });
    },
  };
}

export type Harness = Awaited<ReturnType<typeof startHarness>>;
