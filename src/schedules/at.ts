// The `at` of a one-shot job: an ISO 8601 date and time, with an offset (an instant) or without (a wall time in the
// job's zone). Read by hand, strictly: Date.parse accepts too much (and reads an offset-less time in the server's zone).
import { instantOf, shown, type WallTime } from "./zone.js";

const ISO = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,3})\d*)?)?(Z|[+-]\d{2}:?\d{2})?$/i;

/** The instant `text` names, reading a time without offset in `zone`; or an error saying what is wrong with it. */
export function parseAt(text: string, zone: string): { at: number } | { error: string } {
  const trimmed = text.trim();
  const m = ISO.exec(trimmed);
  if (!m) {
    const dateOnly = /^\d{4}-\d{2}-\d{2}$/.test(trimmed) ? " with a time of day" : "";
    return { error: `"${shown(trimmed)}" is not an ISO 8601 date and time${dateOnly}; write it like 2026-11-28T09:00 or 2026-11-28T09:00:00+01:00` };
  }
  const [year, month, day, hour, minute, second] = [1, 2, 3, 4, 5, 6].map((i) => Number(m[i] ?? 0)) as [number, number, number, number, number, number];
  const ms = Number((m[7] ?? "0").padEnd(3, "0"));
  const problem =
    month < 1 || month > 12
      ? `month ${month}`
      : day < 1 || day > daysIn(year, month)
        ? `day ${day} of ${year}-${String(month).padStart(2, "0")}`
        : hour > 23
          ? `hour ${hour}`
          : minute > 59
            ? `minute ${minute}`
            : second > 59
              ? `second ${second}`
              : null;
  if (problem) return { error: `"${shown(trimmed)}" has no ${problem}` };
  const wall: WallTime = { year, month, day, hour, minute, second };
  const offset = m[8];
  if (offset === undefined) return { at: instantOf(wall, zone) + ms };
  const utc = Date.UTC(year, month - 1, day, hour, minute, second, ms);
  if (offset.toUpperCase() === "Z") return { at: utc };
  const [, sign, hh, mm] = /^([+-])(\d{2}):?(\d{2})$/.exec(offset)!;
  if (Number(hh) > 23 || Number(mm) > 59) return { error: `"${shown(trimmed)}" has an offset out of range (${offset})` };
  return { at: utc - (sign === "-" ? -1 : 1) * (Number(hh) * 60 + Number(mm)) * 60_000 };
}

function daysIn(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}
