import type { Result } from "./scenarios.js";

// The arithmetic of `npm run bench -- --compare <ref>`: runs of the code at <ref> ("before") alternated with runs of
// the working tree ("after"); per scenario and figure the median of each side, their ratio and the spread of the
// per-pair ratios, and a verdict against a threshold. Only figures whose better direction is known are judged.

export type Direction = "higher" | "lower";

/** Which way is better for a figure, from its name; null for counts and settings (sessions, runs, model_calls). */
export function direction(figure: string): Direction | null {
  if (figure.endsWith("_per_s") || figure === "percent_of_limit") return "higher";
  if (/(_ms|_us|_mb|_bytes|_per_message|_per_user_message|_per_session|^ratio)$/.test(figure) || /^(statements|round_trips)_/.test(figure) || /bytes/.test(figure))
    return "lower";
  return null;
}

/** Figures that decide the verdict: rates and CPU move little from run to run; a p99 or RSS is reported, not judged. */
export function judged(figure: string): boolean {
  return (
    figure.endsWith("_per_s") ||
    figure.startsWith("cpu_us") ||
    figure.startsWith("server_cpu_us") ||
    figure === "db_bytes_per_message" ||
    figure === "db_bytes_per_session" ||
    /^(statements|round_trips)_/.test(figure)
  );
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

export interface FigureComparison {
  scenario: string;
  figure: string;
  before: number;
  after: number;
  /** after ÷ before (1.10 = the working tree's figure is 10 % higher). */
  ratio: number;
  /** The lowest and highest ratio of one "after" run to the "before" run next to it. */
  spread: [number, number];
  /**
   * "worse" when the figure is judged, its median moved against the better direction by more than the threshold and
   * no single pair of runs moved the other way (a spread across 1.00 is the machine's noise, not the change).
   */
  verdict: "better" | "worse" | "same" | "reported";
}

/** Runs as they came: runs[i] is one process's results, before[i] and after[i] alternated. */
export function compareRuns(before: Result[][], after: Result[][], thresholdPercent: number): FigureComparison[] {
  const out: FigureComparison[] = [];
  const scenarios = new Set(after.flat().map((r) => r.scenario));
  for (const scenario of scenarios) {
    const figures = numericFigures(after, scenario);
    for (const figure of figures) {
      const b = series(before, scenario, figure);
      const a = series(after, scenario, figure);
      if (b.length === 0 || a.length === 0) continue;
      const mb = median(b);
      const ma = median(a);
      const pairs = Math.min(a.length, b.length);
      const ratios = Array.from({ length: pairs }, (_, i) => ratioOf(a[i]!, b[i]!));
      const ratio = ratioOf(ma, mb);
      out.push({
        scenario,
        figure,
        before: mb,
        after: ma,
        ratio,
        spread: [Math.min(...ratios), Math.max(...ratios)],
        verdict: verdictOf(figure, ratio, ratios, thresholdPercent),
      });
    }
  }
  return out;
}

function ratioOf(after: number, before: number): number {
  if (before === 0) return after === 0 ? 1 : Number.POSITIVE_INFINITY;
  return after / before;
}

function verdictOf(figure: string, ratio: number, pairs: number[], thresholdPercent: number): FigureComparison["verdict"] {
  const better = direction(figure);
  if (!better || !judged(figure)) return "reported";
  const limit = thresholdPercent / 100;
  const gain = (r: number) => (better === "higher" ? r - 1 : 1 - r);
  if (gain(ratio) < -limit && pairs.every((r) => gain(r) < 0)) return "worse";
  if (gain(ratio) > limit && pairs.every((r) => gain(r) > 0)) return "better";
  return "same";
}

function numericFigures(runs: Result[][], scenario: string): string[] {
  const names = new Set<string>();
  for (const run of runs) for (const r of run) if (r.scenario === scenario) for (const [k, v] of Object.entries(r)) if (typeof v === "number") names.add(k);
  return [...names];
}

function series(runs: Result[][], scenario: string, figure: string): number[] {
  const values: number[] = [];
  for (const run of runs) {
    const value = run.find((r) => r.scenario === scenario)?.[figure];
    if (typeof value === "number") values.push(value);
  }
  return values;
}

/** The table `--compare` prints, one line per figure. */
export function formatComparison(rows: readonly FigureComparison[], ref: string): string {
  const head = `scenario             figure                           ${ref.slice(0, 12).padStart(12)}   working tree   ratio  (spread)         verdict`;
  const lines = rows.map((r) =>
    [
      r.scenario.padEnd(20),
      r.figure.padEnd(32),
      fmt(r.before).padStart(12),
      fmt(r.after).padStart(14),
      `${r.ratio.toFixed(2)}×`.padStart(7),
      ` (${r.spread[0].toFixed(2)}–${r.spread[1].toFixed(2)})`.padEnd(17),
      r.verdict === "reported" ? "" : r.verdict,
    ].join(" "),
  );
  return [head, ...lines].join("\n");
}

function fmt(value: number): string {
  return Number.isInteger(value) ? String(value) : value.toFixed(3);
}

/** One process's stdout: one JSON object per scenario (lines that are not are ignored). */
export function parseResults(stdout: string): Result[] {
  const results: Result[] = [];
  for (const line of stdout.split("\n")) {
    if (!line.startsWith("{")) continue;
    try {
      const value: unknown = JSON.parse(line);
      if (value && typeof value === "object" && typeof (value as Result).scenario === "string") results.push(value as Result);
    } catch {
      // not a result line
    }
  }
  return results;
}
