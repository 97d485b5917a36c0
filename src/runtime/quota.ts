// Daily quotas: USER_DAILY_MESSAGES and USER_DAILY_USD per user (in every chat together), CHAT_DAILY_USD per chat
// (a group or channel: every member's spending in it). A user's day runs from their midnight (their time zone when
// known, else UTC); a chat's from midnight UTC. Users in QUOTA_EXEMPT_USERS are never limited, and their spending
// counts for no one. The counters are the store's `usage` role, shared by every replica. Each refusal is logged
// with its reason and counted; the user is told which limit and when it resets once a day, then nothing more.
import type { Logger } from "pino";
import { formatUsd, nanoToUsd } from "../llm/prices.js";
import { instantOf, wallTime } from "../schedules/zone.js";
import type { Store, UsageScope } from "../store/store.js";

export type QuotaLimit = "USER_DAILY_MESSAGES" | "USER_DAILY_USD" | "CHAT_DAILY_USD";

/** The limits; 0 means none. */
export interface QuotaSettings {
  userDailyMessages: number;
  userDailyUsd: number;
  chatDailyUsd: number;
  exemptUsers: readonly string[];
}

/** Where a refusal happened: at the door (a new message) or before a model call of a running task. */
export type QuotaPlace = "door" | "call";

export interface QuotaRefusal {
  limit: QuotaLimit;
  /** What the user is told: the limit, what was used, when it resets. */
  text: string;
  resetsAt: number;
  /** The first refusal of this limit today: the user is to be told (later ones are silent). */
  tell: boolean;
}

export interface QuotaDeps {
  store: Pick<Store, "usage">;
  settings: QuotaSettings;
  now: () => number;
  log: Logger;
  /** The user's IANA time zone when known; null: UTC. */
  zoneOf?: (userId: string) => Promise<string | null>;
  /** Counted for switchboard_quota_refusals_total. */
  refused?: (limit: QuotaLimit, place: QuotaPlace) => void;
}

interface Day {
  day: string;
  zone: string;
  resetsAt: number;
}

/** The chat a session key is in: a Slack thread's is its channel (`slack:T:C:thread:ts` → `slack:T:C`). */
export function chatOf(sessionKey: string): string {
  const at = sessionKey.indexOf(":thread:");
  return at > 0 && sessionKey.startsWith("slack:") ? sessionKey.slice(0, at) : sessionKey;
}

/** The calendar day `instant` falls on in `zone`, and the next midnight there. */
export function dayIn(instant: number, zone: string): Day {
  const w = wallTime(instant, zone);
  const pad = (n: number) => String(n).padStart(2, "0");
  const next = new Date(Date.UTC(w.year, w.month - 1, w.day + 1));
  const resetsAt = instantOf({ year: next.getUTCFullYear(), month: next.getUTCMonth() + 1, day: next.getUTCDate(), hour: 0, minute: 0, second: 0 }, zone);
  return { day: `${w.year}-${pad(w.month)}-${pad(w.day)}`, zone, resetsAt };
}

/** "00:00 on Sat 28 Nov (Europe/Berlin), in 7 h 12 min". */
export function resetText(day: Day, now: number): string {
  const at = new Intl.DateTimeFormat("en-GB", { timeZone: day.zone, weekday: "short", day: "numeric", month: "short" }).format(day.resetsAt);
  const minutes = Math.max(1, Math.ceil((day.resetsAt - now) / 60_000));
  const left = minutes >= 60 ? `${Math.floor(minutes / 60)} h ${minutes % 60} min` : `${minutes} min`;
  return `00:00 on ${at} (${day.zone}), in ${left}`;
}

export class Quotas {
  private readonly exempt: ReadonlySet<string>;

  constructor(private readonly deps: QuotaDeps) {
    this.exempt = new Set(deps.settings.exemptUsers);
  }

  /** Any limit set at all. */
  get enabled(): boolean {
    const s = this.deps.settings;
    return s.userDailyMessages > 0 || s.userDailyUsd > 0 || s.chatDailyUsd > 0;
  }

  isExempt(userId: string): boolean {
    return this.exempt.has(userId);
  }

  /**
   * A new message from `userId` in `chat`: refused when a limit is reached (nothing counted), else counted.
   * Exempt users and a quota-less configuration pass without a read.
   */
  async admit(userId: string, chat: string): Promise<QuotaRefusal | null> {
    if (!this.enabled || this.isExempt(userId)) return null;
    const refusal = await this.check(userId, chat, "door", true);
    if (refusal) return refusal;
    const { day } = await this.userDay(userId);
    await this.deps.store.usage.add([{ scope: "user", subject: userId, day, messages: 1 }]);
    return null;
  }

  /** Before a model call made on `userId`'s behalf in `chat`: refused when a USD limit is reached. */
  async beforeCall(userId: string, chat: string): Promise<QuotaRefusal | null> {
    if (!this.enabled || this.isExempt(userId)) return null;
    return this.check(userId, chat, "call", false);
  }

  /** What a model call made on `userId`'s behalf in `chat` cost, added to both their counters. */
  async spent(userId: string, chat: string, costNanoUsd: number): Promise<void> {
    if (!this.enabled || this.isExempt(userId) || costNanoUsd <= 0) return;
    const [user, group] = [await this.userDay(userId), this.chatDay()];
    await this.deps.store.usage.add([
      { scope: "user", subject: userId, day: user.day, costNanoUsd },
      { scope: "chat", subject: chatOf(chat), day: group.day, costNanoUsd },
    ]);
  }

  /** /usage: today's use against the limits. */
  async report(userId: string, chat: string): Promise<string> {
    const { settings, store, now } = this.deps;
    const user = await this.userDay(userId);
    const group = this.chatDay();
    const mine = await store.usage.get("user", userId, user.day);
    const ours = await store.usage.get("chat", chatOf(chat), group.day);
    const of = (limit: number, shown: string) => (limit > 0 ? ` of ${shown}` : " (no limit)");
    const lines = [
      `Your use today (${user.day}, ${user.zone}):`,
      `• messages: ${mine.messages}${of(settings.userDailyMessages, String(settings.userDailyMessages))}`,
      `• cost: ${formatUsd(nanoToUsd(mine.costNanoUsd))}${of(settings.userDailyUsd, formatUsd(settings.userDailyUsd))}`,
      `This chat today (${group.day}, UTC): ${formatUsd(nanoToUsd(ours.costNanoUsd))}${of(settings.chatDailyUsd, formatUsd(settings.chatDailyUsd))}.`,
      `Your limits reset at ${resetText(user, now())}.`,
    ];
    if (this.isExempt(userId)) lines.push("You are exempt from the limits (QUOTA_EXEMPT_USERS).");
    return lines.join("\n");
  }

  private async userDay(userId: string): Promise<Day> {
    const zone = (await this.deps.zoneOf?.(userId).catch(() => null)) ?? "UTC";
    return dayIn(this.deps.now(), zone);
  }

  private chatDay(): Day {
    return dayIn(this.deps.now(), "UTC");
  }

  private async check(userId: string, chat: string, place: QuotaPlace, messages: boolean): Promise<QuotaRefusal | null> {
    const { settings, store } = this.deps;
    const user = await this.userDay(userId);
    const mine = await store.usage.get("user", userId, user.day);
    if (messages && settings.userDailyMessages > 0 && mine.messages >= settings.userDailyMessages) {
      const text = `You've sent ${mine.messages} message${mine.messages === 1 ? "" : "s"} today, the daily limit (USER_DAILY_MESSAGES), so I can't take more. It resets at ${resetText(user, this.deps.now())}.`;
      return this.refuse({ limit: "USER_DAILY_MESSAGES", scope: "user", subject: userId, day: user, used: mine.messages, text }, userId, chat, place);
    }
    if (settings.userDailyUsd > 0 && nanoToUsd(mine.costNanoUsd) >= settings.userDailyUsd) {
      const text = `You've used ${formatUsd(nanoToUsd(mine.costNanoUsd))} of model time today, the daily limit of ${formatUsd(settings.userDailyUsd)} per user (USER_DAILY_USD). It resets at ${resetText(user, this.deps.now())}.`;
      return this.refuse({ limit: "USER_DAILY_USD", scope: "user", subject: userId, day: user, used: nanoToUsd(mine.costNanoUsd), text }, userId, chat, place);
    }
    if (settings.chatDailyUsd > 0) {
      const group = this.chatDay();
      const ours = await store.usage.get("chat", chatOf(chat), group.day);
      if (nanoToUsd(ours.costNanoUsd) >= settings.chatDailyUsd) {
        const text = `This chat has used ${formatUsd(nanoToUsd(ours.costNanoUsd))} of model time today, its daily limit of ${formatUsd(settings.chatDailyUsd)} (CHAT_DAILY_USD). It resets at ${resetText(group, this.deps.now())}.`;
        return this.refuse({ limit: "CHAT_DAILY_USD", scope: "chat", subject: chatOf(chat), day: group, used: nanoToUsd(ours.costNanoUsd), text }, userId, chat, place);
      }
    }
    return null;
  }

  private async refuse(
    r: { limit: QuotaLimit; scope: UsageScope; subject: string; day: Day; used: number; text: string },
    userId: string,
    chat: string,
    place: QuotaPlace,
  ): Promise<QuotaRefusal> {
    // Told once per limit and day: for a chat's limit, once to the chat (every member reads it there).
    const tell = await this.deps.store.usage.tell(r.scope, r.subject, r.day.day, r.limit);
    this.deps.refused?.(r.limit, place);
    this.deps.log.info(
      { user: userId, session: chat, limit: r.limit, used: r.used, day: r.day.day, zone: r.day.zone, resetsAt: r.day.resetsAt, place, told: tell },
      `${place === "door" ? "message" : "model call"} refused: ${r.limit} reached`,
    );
    return { limit: r.limit, text: r.text, resetsAt: r.day.resetsAt, tell };
  }
}
