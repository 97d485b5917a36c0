import { Counter, type Registry } from "prom-client";

/** One series: its labels as prom-client is handed them, and what was added up so far. */
interface Series<L extends string> {
  labels: Partial<Record<L, string>>;
  value: number;
}

/**
 * A counter bumped on every message, added up here and handed to prom-client only when /metrics is scraped (its
 * `collect`). prom-client's `inc` checks the label names and hashes the labels on every call; `add` is two Map
 * look-ups. The scrape shows the same series, in the order they first appeared, with the same values (each series
 * is summed in the same order prom-client would have summed it). Label values are given in `labelNames`' order.
 */
export class CounterTally<L extends string> {
  /** By the first label's value, then the second's ("" for a counter with one label). */
  private readonly series = new Map<string, Map<string, Series<L>>>();
  /** Every series in the order it first appeared: the order of the scrape's lines. */
  private readonly order: Series<L>[] = [];
  private readonly labelNames: readonly L[];

  constructor(config: { name: string; help: string; labelNames: readonly [L] | readonly [L, L]; registers: Registry[] }) {
    this.labelNames = config.labelNames;
    const order = this.order;
    new Counter<L>({
      ...config,
      // `this` is the counter: it is handed the totals, not what came since the last scrape.
      collect() {
        this.reset();
        for (const s of order) this.inc(s.labels, s.value);
      },
    });
  }

  /** Adds `value` (≥ 0) to the series of these label values. */
  add(value: number, first: string, second = ""): void {
    if (!(value >= 0 && value < Infinity)) throw new TypeError(`${value} cannot be added to a counter (it takes finite numbers ≥ 0)`);
    let inner = this.series.get(first);
    if (!inner) this.series.set(first, (inner = new Map()));
    const found = inner.get(second);
    if (found) {
      found.value += value;
      return;
    }
    const labels: Partial<Record<L, string>> = {};
    labels[this.labelNames[0]!] = first;
    if (this.labelNames.length > 1) labels[this.labelNames[1]!] = second;
    const created = { labels, value };
    inner.set(second, created);
    this.order.push(created);
  }
}
