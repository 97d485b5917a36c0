// IANA time zones: checking a name, and converting between an instant and the wall time of a zone. Intl only, so
// the zone data is the one Node ships (ICU), the same that croner reads.

/** A wall-clock time in some zone; month 1-12. */
export interface WallTime {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
}

export const MAX_ZONE_LENGTH = 64;
// Area/Location[/More] or a one-part name (UTC, EST): no offsets like "+01:00", which are not IANA names.
const ZONE_SHAPE = /^[A-Za-z][A-Za-z0-9_+-]*(?:\/[A-Za-z0-9_+-]+){0,2}$/;

/**
 * The canonical spelling of an IANA zone name ("europe/berlin" → "Europe/Berlin"), or an error naming what is wrong.
 * Aliases stay as Intl resolves them ("US/Eastern" → "America/New_York").
 */
export function checkZone(name: string): { zone: string } | { error: string } {
  const trimmed = name.trim();
  if (trimmed === "") return { error: "is empty; give an IANA time zone such as Europe/Berlin or America/New_York" };
  if (trimmed.length > MAX_ZONE_LENGTH || !ZONE_SHAPE.test(trimmed)) {
    return { error: `"${shown(trimmed)}" is not an IANA time zone name such as Europe/Berlin (offsets like +01:00 are not accepted)` };
  }
  try {
    return { zone: new Intl.DateTimeFormat("en-US", { timeZone: trimmed }).resolvedOptions().timeZone };
  } catch {
    return { error: `"${trimmed}" is not a time zone this server knows; use an IANA name such as Europe/Berlin or Asia/Tokyo` };
  }
}

/** At most 40 characters of untrusted text, for an error message. */
export function shown(text: string): string {
  return text.length > 40 ? `${text.slice(0, 40)}…` : text;
}

/**
 * The zone a job runs in: the one given for the job, else the user's (/timezone), else DEFAULT_TIMEZONE, else UTC.
 */
export function effectiveZone(jobZone: string | undefined, userZone: string | null | undefined, defaultZone: string | undefined): string {
  return jobZone ?? userZone ?? defaultZone ?? "UTC";
}

function formatter(zone: string): Intl.DateTimeFormat {
  return new Intl.DateTimeFormat("en-US", {
    timeZone: zone,
    hourCycle: "h23",
    year: "numeric",
    month: "numeric",
    day: "numeric",
    hour: "numeric",
    minute: "numeric",
    second: "numeric",
  });
}

/** The wall time in `zone` at `instant` (milliseconds dropped). */
export function wallTime(instant: number, zone: string): WallTime {
  const parts = Object.fromEntries(
    formatter(zone)
      .formatToParts(new Date(instant))
      .filter((p) => p.type !== "literal")
      .map((p) => [p.type, Number(p.value)]),
  ) as Record<string, number>;
  return { year: parts.year!, month: parts.month!, day: parts.day!, hour: parts.hour!, minute: parts.minute!, second: parts.second! };
}

/** `zone`'s offset from UTC at `instant`, in milliseconds (+01:00 → 3 600 000). */
export function offsetAt(instant: number, zone: string): number {
  const whole = Math.floor(instant / 1000) * 1000;
  return asUtc(wallTime(whole, zone)) - whole;
}

function asUtc(w: WallTime): number {
  return Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute, w.second);
}

/**
 * The instant a wall time names in `zone`. Times that happen twice (the repeated hour in autumn) take the first;
 * times that do not exist (the hour skipped in spring) move forward by the length of the gap (02:30 → 03:30), as
 * Temporal's "compatible" disambiguation and most calendars do.
 */
export function instantOf(w: WallTime, zone: string): number {
  const utc = asUtc(w);
  // A zone changes its offset at most once in any two days: the offsets a day before and after cover both sides.
  const before = offsetAt(utc - 86_400_000, zone);
  const after = offsetAt(utc + 86_400_000, zone);
  const fits = [utc - before, utc - after].filter((t) => asUtc(wallTime(t, zone)) === utc).sort((a, b) => a - b);
  return fits[0] ?? utc - before;
}

/** "+01:00", "-04:30", "+00:00". */
export function offsetText(offsetMs: number): string {
  const minutes = Math.round(Math.abs(offsetMs) / 60_000);
  const pad = (n: number) => String(n).padStart(2, "0");
  return `${offsetMs < 0 ? "-" : "+"}${pad(Math.floor(minutes / 60))}:${pad(minutes % 60)}`;
}

/** ISO 8601 with the zone's offset: 2026-11-28T09:00:00+01:00. */
export function isoInZone(instant: number, zone: string): string {
  const w = wallTime(instant, zone);
  const pad = (n: number, size = 2) => String(n).padStart(size, "0");
  const date = `${pad(w.year, 4)}-${pad(w.month)}-${pad(w.day)}`;
  return `${date}T${pad(w.hour)}:${pad(w.minute)}:${pad(w.second)}${offsetText(offsetAt(instant, zone))}`;
}
