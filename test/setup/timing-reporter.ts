// A vitest reporter that ends every run with where the time went: the run's wall time and the slowest test files
// (import + tests + hooks, as vitest measures them per file). The bar is in docs/engineering/simulation.md ("How long
// the tests take"); when a new file shows up here, make it faster (shared servers per file, fake clocks, fewer process
// starts) or move its long form behind `npm run soak`.
import type { Reporter, TestModule, Vitest } from "vitest/node";

/** How many files the summary lists; `TEST_SLOWEST=0` turns the summary off. */
const SHOWN = Number(process.env.TEST_SLOWEST ?? 10);
/** The whole suite's budget on a 2-core machine, in seconds: a run of every file that takes longer says so. */
const BUDGET = 240;

export default class TimingReporter implements Reporter {
  private started = 0;
  /** How many test files the configuration selects, to tell a run of all of them from a run of some. */
  private everyFile: Promise<number> = Promise.resolve(Infinity);

  onInit(vitest: Vitest): void {
    this.everyFile = vitest.globTestSpecifications().then(
      (all) => new Set(all.map((s) => s.moduleId)).size,
      () => Infinity,
    );
  }

  onTestRunStart(): void {
    this.started = performance.now();
  }

  async onTestRunEnd(modules: ReadonlyArray<TestModule>): Promise<void> {
    if (!(SHOWN > 0) || modules.length === 0) return;
    const wall = (performance.now() - this.started) / 1000;
    const files = modules
      .map((m) => {
        const d = m.diagnostic();
        return { file: m.relativeModuleId, seconds: (d.collectDuration + d.duration) / 1000, project: m.project.name };
      })
      .sort((a, b) => b.seconds - a.seconds);
    const total = files.reduce((sum, f) => sum + f.seconds, 0);
    const lines = files.slice(0, SHOWN).map((f) => `  ${f.seconds.toFixed(1).padStart(6)} s  ${f.file}`);
    const whole = files.length >= (await this.everyFile);
    const over = whole && wall > BUDGET ? ` That is over the suite's ${BUDGET} s budget (or the machine is busy: see docs/engineering/simulation.md).` : "";
    process.stdout.write(
      `\nTest time: ${wall.toFixed(0)} s wall, ${total.toFixed(0)} s in ${files.length} files.${over} The ${lines.length} slowest files:\n${lines.join("\n")}\n`,
    );
  }
}
