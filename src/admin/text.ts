// Small text helpers for the operator's terminal views: safe strings, durations, money, aligned columns.
import { formatUsd } from "../llm/prices.js";

// Escape sequences are removed whole (their parameters too), before the lone control characters that remain:
// CSI (ESC [ … final, or the 8-bit 0x9b), OSC/DCS/APC/PM/SOS strings up to their terminator, and two-byte ESC x.
const ESCAPES = /(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]?|(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?|\x1b[ -~]?/g;
// C0 (tabs and newlines too: a cell is one line), DEL, C1, and the bidirectional overrides that reorder what a
// terminal shows ("Trojan Source").
const CONTROLS = /[\x00-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/** A string from a user or a model, fit for a terminal: no escape sequences, no control characters. */
export function clean(value: string): string {
  return value
    .replace(ESCAPES, "")
    .replace(/[\t\n\r\v\f]+/g, " ")
    .replace(CONTROLS, "");
}

/** At most `max` characters (code points), with "…" when cut. */
export function clip(value: string, max: number): string {
  const chars = [...value];
  return chars.length <= max ? value : `${chars.slice(0, Math.max(0, max - 1)).join("")}…`;
}

/** "42s", "3m", "2h 5m", "13h", "3d 4h", "12d": minutes only while they matter. */
export function duration(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m`;
  const h = Math.floor(m / 60);
  if (h < 24) return m % 60 && h < 10 ? `${h}h ${m % 60}m` : `${h}h`;
  const d = Math.floor(h / 24);
  return h % 24 && d < 10 ? `${d}d ${h % 24}h` : `${d}d`;
}

/** "3m ago", "just now", or "in 2h" for a time still to come. */
export function ago(at: number, now: number): string {
  const ms = now - at;
  if (ms < 0) return `in ${duration(-ms)}`;
  return ms < 1000 ? "just now" : `${duration(ms)} ago`;
}

/** "$0.0042" under a dollar, "$12.50" above; "$0" for nothing. */
/** As everywhere else (formatUsd), except that nothing at all reads "$0" in a column. */
export function usd(value: number): string {
  return value === 0 ? "$0" : formatUsd(value);
}

/** "950", "12.3k", "4.5M". */
export function tokens(value: number): string {
  if (value < 1000) return String(value);
  if (value < 1_000_000) return `${trim(value / 1000)}k`;
  return `${trim(value / 1_000_000)}M`;
}
const trim = (n: number) => (n >= 100 ? String(Math.round(n)) : n.toFixed(1).replace(/\.0$/, ""));

/** "2m", "90s", "1.5h", "1500ms" or bare milliseconds; null when it is none of those. */
export function parseDuration(text: string): number | null {
  const m = /^(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?$/.exec(text.trim());
  if (!m) return null;
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[(m[2] ?? "ms") as "ms"];
  return Math.round(Number(m[1]) * unit);
}

export interface Column {
  title: string;
  width: number;
  align?: "left" | "right";
}

/**
 * Aligned rows under a header, columns two spaces apart; every cell is cleaned and clipped to its width, so a row
 * is never wider than the widths add up to.
 */
export function table(columns: Column[], rows: string[][]): string {
  const line = (cells: string[]) =>
    columns
      .map((c, i) => {
        const cell = clip(clean(cells[i] ?? ""), c.width);
        const pad = " ".repeat(Math.max(0, c.width - [...cell].length));
        return c.align === "right" ? pad + cell : cell + pad;
      })
      .join("  ")
      .trimEnd();
  return [line(columns.map((c) => c.title)), ...rows.map(line)].join("\n");
}
