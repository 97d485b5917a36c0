import { isAbsolute, relative, resolve, sep } from "node:path";
import { watch, type FSWatcher } from "chokidar";
import type { Logger } from "pino";
import { systemTimers, type Timers } from "../runtime/deps.js";
import { EMPTY_CATALOG, type Catalog, type Definition } from "./definition.js";
import { loadCatalog, type LoadOptions } from "./loader.js";
import { CatalogLock, type LockMode } from "./lock.js";
import type { SchemaChecker } from "./schema-checker.js";

/**
 * The catalog as it is on disk now. Changes to skills/ or agents/ are picked up after a short quiet
 * period (a debounced rescan) and apply to new invocations; running frames keep the system prompt
 * they started with.
 */
export class LiveCatalog {
  private catalog: Catalog;
  private watcher: FSWatcher | null = null;
  private timer: unknown = null;
  private readonly listeners: Array<(catalog: Catalog) => void> = [];
  /** Problems already logged, so a reload logs only what changed. */
  private logged = new Set<string>();
  private readonly lock: CatalogLock | null;
  /** Counts loads, so that the schema check of an older load never replaces a newer catalog. */
  private generation = 0;
  private verifying: Promise<void> = Promise.resolve();

  constructor(
    private readonly skillsDir: string,
    private readonly agentsDir: string,
    /**
     * `lock`: SKILLS_LOCK and the lock file; what loaded is checked against it after every load. `schemas`: where
     * output_schemas are compiled after every load (a definition whose schema cannot be compiled is dropped).
     * `timers`: for the quiet period; default the system's.
     */
    private readonly options: LoadOptions & { log: Logger; debounceMs?: number; lock?: { mode: LockMode; file: string }; schemas?: SchemaChecker; timers?: Timers },
  ) {
    this.lock = CatalogLock.from(options.lock, options.log);
    this.catalog = EMPTY_CATALOG;
    this.catalog = this.load();
  }

  /** Resolves once the output_schemas of the latest load have been compiled (off the event loop) and applied. */
  settled(): Promise<void> {
    return this.verifying;
  }

  get current(): Catalog {
    return this.catalog;
  }

  /** Called after each reload with the new catalog. */
  onReload(listener: (catalog: Catalog) => void): void {
    this.listeners.push(listener);
  }

  reload(): Catalog {
    this.catalog = this.load();
    for (const listener of this.listeners) listener(this.catalog);
    return this.catalog;
  }

  /** Starts watching; resolves once the watcher is ready. */
  watch(): Promise<void> {
    this.watcher = watch([this.skillsDir, this.agentsDir], { ignoreInitial: true, ignored: (path) => this.isHidden(path) });
    this.watcher.on("all", () => this.schedule());
    this.watcher.on("error", (error) => this.options.log.warn({ err: error }, "watching skills/agents failed; restart to pick up changes"));
    const ready = new Promise<void>((resolve) => this.watcher!.once("ready", () => resolve()));
    return Promise.all([ready, this.lock?.watch(() => this.schedule())]).then(() => undefined);
  }

  /**
   * Dot entries directly in skills/ or agents/ (.git, an editor's swap files) are not definitions and do not trigger
   * reloads. Inside a skill's folder everything counts: read_skill_file serves dot files too, and the lock hashes
   * them, so a change there must be noticed. Judged from the watched folder down only: SKILLS_DIR=~/.switchboard/skills
   * must still be watched.
   */
  private isHidden(path: string): boolean {
    for (const root of [this.skillsDir, this.agentsDir]) {
      const rel = relative(resolve(root), resolve(path));
      if (rel === "") return false;
      if (!rel.startsWith("..") && !isAbsolute(rel)) return rel.split(sep)[0]!.startsWith(".");
    }
    return false;
  }

  async close(): Promise<void> {
    if (this.timer !== null) this.timers.clearTimeout(this.timer);
    await this.watcher?.close();
    await this.lock?.close();
  }

  private get timers(): Timers {
    return this.options.timers ?? systemTimers;
  }

  private schedule(): void {
    if (this.timer !== null) this.timers.clearTimeout(this.timer);
    this.timer = this.timers.setTimeout(() => {
      this.timer = null;
      const before = this.catalog;
      const after = this.reload();
      this.options.log.info(
        { skills: [...after.skills.keys()], agents: [...after.agents.keys()], before: before.skills.size + before.agents.size },
        "skills and agents reloaded",
      );
    }, this.options.debounceMs ?? 300);
  }

  private load(): Catalog {
    let loaded: Catalog;
    try {
      loaded = loadCatalog(this.skillsDir, this.agentsDir, this.options);
    } catch (error) {
      // Every file's problems are its own (loader.ts); this is the net under that, so a reload never stops reloads.
      this.options.log.error({ err: error }, "reading skills/ and agents/ failed; keeping the skills and agents loaded before");
      return this.catalog;
    }
    this.logChanges(loaded);
    const catalog = this.lock ? this.lock.apply(loaded) : loaded;
    const generation = ++this.generation;
    this.verifying = this.verifySchemas(catalog, generation);
    return catalog;
  }

  /**
   * Compiles every output_schema on the schema checker; a definition whose schema fails is dropped and reported like
   * any other broken definition. The loader already refused what is cheap to see (limits, the meta-schema).
   */
  private async verifySchemas(catalog: Catalog, generation: number): Promise<void> {
    const schemas = this.options.schemas;
    if (!schemas) return;
    const broken: Array<{ def: Definition; error: string }> = [];
    for (const def of [...catalog.skills.values(), ...catalog.agents.values()]) {
      if (!def.outputSchema) continue;
      const compiled = await schemas.compile(def.outputSchema);
      if (!compiled.ok) broken.push({ def, error: compiled.error.replace(/^output_schema:? /, "output_schema: ") });
    }
    if (generation !== this.generation || broken.length === 0) return;
    const keep = (defs: ReadonlyMap<string, Definition>) => new Map([...defs].filter(([, def]) => !broken.some((b) => b.def === def)));
    this.catalog = {
      ...catalog,
      skills: keep(catalog.skills),
      agents: keep(catalog.agents),
      problems: [...catalog.problems, ...broken.map(({ def, error }) => `${def.source}: ${error}`)],
    };
    this.logChanges(this.catalog);
    for (const listener of this.listeners) listener(this.catalog);
  }

  /** Logs new problems, and which earlier ones are gone; an unchanged problem is logged once, not on every reload. */
  private logChanges(catalog: Catalog): void {
    const now = new Set([...catalog.problems.map((p) => `error ${p}`), ...catalog.warnings.map((w) => `warning ${w}`)]);
    for (const problem of catalog.problems) {
      if (!this.logged.has(`error ${problem}`)) this.options.log.warn({ problem }, `skipped a definition: ${problem}`);
    }
    for (const warning of catalog.warnings) {
      if (!this.logged.has(`warning ${warning}`)) this.options.log.warn({ warning }, warning);
    }
    for (const old of this.logged) {
      if (!now.has(old)) this.options.log.info({ resolved: old.replace(/^\w+ /, "") }, `no longer reported: ${old.replace(/^\w+ /, "")}`);
    }
    this.logged = now;
  }
}
