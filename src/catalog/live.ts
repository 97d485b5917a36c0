import { watch, type FSWatcher } from "chokidar";
import type { Logger } from "pino";
import type { Catalog } from "./definition.js";
import { loadCatalog, type LoadOptions } from "./loader.js";

/**
 * The catalog as it is on disk now. Changes to skills/ or agents/ are picked up after a short quiet
 * period (a debounced rescan) and apply to new invocations; running frames keep the system prompt
 * they started with.
 */
export class LiveCatalog {
  private catalog: Catalog;
  private watcher: FSWatcher | null = null;
  private timer: NodeJS.Timeout | null = null;
  private readonly listeners: Array<(catalog: Catalog) => void> = [];

  constructor(
    private readonly skillsDir: string,
    private readonly agentsDir: string,
    private readonly options: LoadOptions & { log: Logger; debounceMs?: number },
  ) {
    this.catalog = this.load();
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
    this.watcher = watch([this.skillsDir, this.agentsDir], { ignoreInitial: true, ignored: (path) => /(^|[\\/])\.[^\\/]/.test(path) });
    this.watcher.on("all", () => this.schedule());
    this.watcher.on("error", (error) => this.options.log.warn({ err: error }, "watching skills/agents failed; restart to pick up changes"));
    return new Promise((resolve) => this.watcher!.once("ready", () => resolve()));
  }

  async close(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    await this.watcher?.close();
  }

  private schedule(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
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
    const catalog = loadCatalog(this.skillsDir, this.agentsDir, this.options);
    for (const problem of catalog.problems) this.options.log.warn({ problem }, `skipped a definition: ${problem}`);
    for (const warning of catalog.warnings) this.options.log.warn({ warning }, warning);
    return catalog;
  }
}
