// What a model call costs. Prices are USD per million tokens, as Anthropic lists them on
// https://platform.claude.com/docs/en/about-claude/pricing (read 2026-11; "5m cache writes" is the cache-write
// price, "cache hits & refreshes" the cache-read price). MODEL_PRICES overrides or adds models.

export interface ModelPrice {
  input: number;
  output: number;
  cacheWrite: number;
  cacheRead: number;
}

export interface TokenCounts {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens?: number;
  cacheWriteTokens?: number;
  /** Searches made by the API's web search tool. */
  webSearchRequests?: number;
}

/** The web search tool's price: USD 10 per 1000 searches, on top of the tokens (the same pricing page). */
export const WEB_SEARCH_NANO_USD = 10_000_000;

const price = (input: number, output: number, cacheWrite: number, cacheRead: number): ModelPrice => ({ input, output, cacheWrite, cacheRead });

export const DEFAULT_PRICES: Readonly<Record<string, ModelPrice>> = {
  "claude-opus-5-5": price(4, 20, 5, 0.2),
  "claude-sonnet-5-5": price(2, 10, 2.5, 0.1),
  "claude-haiku-5-5": price(0.1, 0.5, 0.125, 0.01),
  "claude-opus-5": price(5, 25, 6.25, 0.5),
  "claude-sonnet-5": price(2, 10, 2.5, 0.2),
  "claude-opus-4-8": price(5, 25, 6.25, 0.5),
  "claude-opus-4-7": price(5, 25, 6.25, 0.5),
  "claude-opus-4-6": price(5, 25, 6.25, 0.5),
  "claude-opus-4-5": price(5, 25, 6.25, 0.5),
  "claude-opus-4-1": price(15, 75, 18.75, 1.5),
  "claude-opus-4": price(15, 75, 18.75, 1.5),
  "claude-sonnet-4-6": price(3, 15, 3.75, 0.3),
  "claude-sonnet-4-5": price(3, 15, 3.75, 0.3),
  "claude-sonnet-4": price(3, 15, 3.75, 0.3),
  "claude-3-7-sonnet": price(3, 15, 3.75, 0.3),
  "claude-haiku-4-5": price(1, 5, 1.25, 0.1),
  "claude-3-5-haiku": price(0.8, 4, 1, 0.08),
  "claude-3-haiku": price(0.25, 1.25, 0.3, 0.03),
};

/**
 * Parses MODEL_PRICES: comma-separated `model=input/output[/cache_write/cache_read]` in USD per million tokens
 * (`claude-sonnet-5-5=2/10/2.5/0.1`). Without the cache prices, Anthropic's usual multipliers apply: writes 1.25×
 * input, reads 0.1× input.
 */
export function parsePrices(text: string | undefined): { prices: Record<string, ModelPrice> } | { error: string } {
  const prices: Record<string, ModelPrice> = {};
  for (const part of (text ?? "")
    .split(",")
    .map((p) => p.trim())
    .filter(Boolean)) {
    const at = part.indexOf("=");
    const model = part.slice(0, at).trim();
    const numbers = part
      .slice(at + 1)
      .split("/")
      .map((n) => n.trim());
    const values = numbers.map(Number);
    if (at <= 0 || (values.length !== 2 && values.length !== 4) || numbers.some((n) => n === "") || values.some((n) => !Number.isFinite(n) || n < 0)) {
      return { error: `"${part}" is not model=input/output or model=input/output/cache_write/cache_read (USD per million tokens)` };
    }
    const [input, output, cacheWrite = input! * 1.25, cacheRead = input! * 0.1] = values;
    prices[model] = price(input!, output!, cacheWrite, cacheRead);
  }
  return { prices };
}

/** The price table: the defaults with MODEL_PRICES on top. Unknown models cost nothing (and `known` says so). */
export class PriceTable {
  private readonly table: Record<string, ModelPrice>;

  constructor(overrides: Record<string, ModelPrice> = {}) {
    this.table = { ...DEFAULT_PRICES, ...overrides };
  }

  /** The price of `model`; a dated id (`claude-haiku-4-5-20251001`) or a `-latest` alias takes its family's. */
  priceOf(model: string): ModelPrice | null {
    const exact = this.table[model];
    if (exact) return exact;
    const family = model.replace(/-(\d{8}|latest)$/, "");
    return this.table[family] ?? null;
  }

  known(model: string): boolean {
    return this.priceOf(model) !== null;
  }

  /** The cost of one call in whole nano-USD (so sums over many calls stay exact); searches cost the same on any model. */
  costNanoUsd(model: string, usage: TokenCounts): number {
    const searches = (usage.webSearchRequests ?? 0) * WEB_SEARCH_NANO_USD;
    const p = this.priceOf(model);
    if (!p) return searches;
    // USD per million tokens × tokens = micro-USD; × 1000 = nano-USD.
    const micro = usage.inputTokens * p.input + usage.outputTokens * p.output + (usage.cacheWriteTokens ?? 0) * p.cacheWrite + (usage.cacheReadTokens ?? 0) * p.cacheRead;
    return Math.round(micro * 1000) + searches;
  }
}

export const nanoToUsd = (nanos: number): number => nanos / 1e9;

/** USD for people: four decimals under a dollar ($0.0042), two above ($12.30). */
export function formatUsd(usd: number): string {
  return `$${usd.toFixed(Math.abs(usd) < 1 ? 4 : 2)}`;
}
