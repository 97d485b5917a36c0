// Daily quotas: USER_DAILY_MESSAGES and USER_DAILY_USD per user (in every chat together), CHAT_DAILY_USD per chat
// (a group or channel: every member's spending in it). A user's day runs from their midnight (their time zone when
// known, else UTC); a chat's from midnight UTC. Users in QUOTA_EXEMPT_USERS are never limited, and their spending
// counts for no one. The counters are the store's `usage` role, shared by every replica. Each refusal is logged
// with its reason and counted; the user is told which limit and when it resets once a day, then nothing more.
// A model call holds its estimated cost on both USD counters while it runs (checked and taken in one step), so
// calls started together — a fan-out of children — see each other, and is settled to what it cost when it returns.
import { randomUUID } from "node:crypto";
import type { Logger } from "pino";
import type { ModelRequest } from "../llm/types.js";
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

/** How long a model call's hold counts when nobody settles it (the process died mid-call); a call outliving it still counts. */
export const HOLD_TTL_MS = 15 * 60_000;

export interface QuotaDeps {
  store: Pick<Store, "usage">;
  settings: QuotaSettings;
  now: () => number;
  log: Logger;
  /** What a model call may cost at most, in nano-USD (held while it runs); absent: nothing is held. */
  estimate?: (request: ModelRequest) => number;
  /** Hold ids (default: random UUIDs). */
  newId?: () => string;
  /** The user's IANA time zone when known; null: UTC. */
  zoneOf?: (userId: string) => Promise<string | null>;
  /** Counted for switchboard_quota_refusals_total. */
  refused?: (limit: QuotaLimit, place: QuotaPlace) => void;
}

/** A model call's place under the USD limits: refused, or its estimate held until `settle` (it returned) or `release`. */
export type QuotaHold = { status: "refused"; refusal: QuotaRefusal } | { status: "held"; settle(costNanoUsd: number): Promise<void>; release(): Promise<void> };

const FREE: QuotaHold = { status: "held", settle: async () => {}, release: async () => {} };
const nano = (usd: number): number => Math.round(usd * 1e9);
/** ", and calls still running may use $0.60 more; that reaches" when some are (what their holds keep). */
const running = (heldNanoUsd: number): string => (heldNanoUsd > 0 ? `, and calls still running may use ${formatUsd(nanoToUsd(heldNanoUsd))} more; that reaches` : ",");

interface Day {
  day: string;
  zone: string;
  resetsAt: number;
}

interface Refusal {
  limit: QuotaLimit;
  scope: UsageScope;
  subject: string;
  day: Day;
  used: number;
  text: string;
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
  async admit(userId: string, chat: string, requestId?: string): Promise<QuotaRefusal | null> {
    if (!this.enabled || this.isExempt(userId)) return null;
    const refusal = await this.check(userId, chat, requestId);
    if (refusal) return refusal;
    const { day } = await this.userDay(userId);
    await this.deps.store.usage.add([{ scope: "user", subject: userId, day, messages: 1 }]);
    return null;
  }

  /**
   * Before a model call made on `userId`'s behalf in `chat`: refused when spending plus the calls under way reach a
   * USD limit; else the call's estimate is held until it is settled to its cost or released. `requestId`: the
   * request the call serves, whose refusal is recorded.
   */
  async hold(userId: string, chat: string, request: ModelRequest, requestId?: string): Promise<QuotaHold> {
    if (!this.enabled || this.isExempt(userId)) return FREE;
    const { settings, store } = this.deps;
    const [user, group] = [await this.userDay(userId), this.chatDay()];
    const spent = (costNanoUsd: number) => [
      { scope: "user" as const, subject: userId, day: user.day, costNanoUsd },
      { scope: "chat" as const, subject: chatOf(chat), day: group.day, costNanoUsd },
    ];
    if (settings.userDailyUsd <= 0 && settings.chatDailyUsd <= 0) {
      return { status: "held", settle: async (cost) => (cost > 0 ? store.usage.add(spent(cost)) : undefined), release: async () => {} };
    }
    const id = (this.deps.newId ?? randomUUID)();
    const held = await store.usage.hold({
      id,
      costNanoUsd: Math.max(0, Math.round(this.deps.estimate?.(request) ?? 0)),
      ttlMs: HOLD_TTL_MS,
      counters: [
        { scope: "user", subject: userId, day: user.day, limitNanoUsd: nano(settings.userDailyUsd) },
        { scope: "chat", subject: chatOf(chat), day: group.day, limitNanoUsd: nano(settings.chatDailyUsd) },
      ],
    });
    if (held.status === "over") {
      const spentNanoUsd = (await store.usage.get(held.scope, held.subject, held.day)).costNanoUsd;
      const underWay = held.usedNanoUsd - spentNanoUsd;
      const refusal = held.scope === "user" ? this.userUsd(userId, user, spentNanoUsd, underWay) : this.chatUsd(chatOf(chat), group, spentNanoUsd, underWay);
      return { status: "refused", refusal: await this.refuse(refusal, userId, chat, "call", requestId) };
    }
    return { status: "held", settle: (cost) => store.usage.settle(id, cost > 0 ? spent(cost) : []), release: () => store.usage.release(id) };
  }

  /** /usage: today's use against the limits. */
  async report(userId: string, chat: string): Promise<string> {
    const { settings, store, now } = this.deps;
    const user = await this.userDay(userId);
    const group = this.chatDay();
    const mine = await store.usage.get("user", userId, user.day);
    const ours = await store.usage.get("chat", chatOf(chat), group.day);
    const held = await store.usage.held("user", userId, user.day);
    const of = (limit: number, shown: string) => (limit > 0 ? ` of ${shown}` : " (no limit)");
    const lines = [
      `Your use today (${user.day}, ${user.zone}):`,
      `• messages: ${mine.messages}${of(settings.userDailyMessages, String(settings.userDailyMessages))}`,
      `• cost: ${formatUsd(nanoToUsd(mine.costNanoUsd))}${of(settings.userDailyUsd, formatUsd(settings.userDailyUsd))}${held > 0 ? `, and up to ${formatUsd(nanoToUsd(held))} for calls still running` : ""}`,
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

  /** A new message: over USER_DAILY_MESSAGES, or already at a USD limit. */
  private async check(userId: string, chat: string, requestId?: string): Promise<QuotaRefusal | null> {
    const { settings, store } = this.deps;
    const user = await this.userDay(userId);
    const mine = await store.usage.get("user", userId, user.day);
    if (settings.userDailyMessages > 0 && mine.messages >= settings.userDailyMessages) {
      const text = `You've sent ${mine.messages} message${mine.messages === 1 ? "" : "s"} today, the daily limit (USER_DAILY_MESSAGES), so I can't take more. It resets at ${resetText(user, this.deps.now())}.`;
      return this.refuse({ limit: "USER_DAILY_MESSAGES", scope: "user", subject: userId, day: user, used: mine.messages, text }, userId, chat, "door", requestId);
    }
    if (settings.userDailyUsd > 0 && nanoToUsd(mine.costNanoUsd) >= settings.userDailyUsd) {
      return this.refuse(this.userUsd(userId, user, mine.costNanoUsd), userId, chat, "door", requestId);
    }
    if (settings.chatDailyUsd > 0) {
      const group = this.chatDay();
      const ours = await store.usage.get("chat", chatOf(chat), group.day);
      if (nanoToUsd(ours.costNanoUsd) >= settings.chatDailyUsd) return this.refuse(this.chatUsd(chatOf(chat), group, ours.costNanoUsd), userId, chat, "door", requestId);
    }
    return null;
  }

  // `heldNanoUsd`: what calls still running may cost on top of what was spent (their holds).
  private userUsd(userId: string, user: Day, spentNanoUsd: number, heldNanoUsd = 0): Refusal {
    const { settings } = this.deps;
    const used = `${formatUsd(nanoToUsd(spentNanoUsd))} of model time today${running(heldNanoUsd)}`;
    const text = `You've used ${used} the daily limit of ${formatUsd(settings.userDailyUsd)} per user (USER_DAILY_USD). It resets at ${resetText(user, this.deps.now())}.`;
    return { limit: "USER_DAILY_USD", scope: "user", subject: userId, day: user, used: nanoToUsd(spentNanoUsd + heldNanoUsd), text };
  }

  private chatUsd(chat: string, group: Day, spentNanoUsd: number, heldNanoUsd = 0): Refusal {
    const { settings } = this.deps;
    const used = `${formatUsd(nanoToUsd(spentNanoUsd))} of model time today${running(heldNanoUsd)}`;
    const text = `This chat has used ${used} its daily limit of ${formatUsd(settings.chatDailyUsd)} (CHAT_DAILY_USD). It resets at ${resetText(group, this.deps.now())}.`;
    return { limit: "CHAT_DAILY_USD", scope: "chat", subject: chat, day: group, used: nanoToUsd(spentNanoUsd + heldNanoUsd), text };
  }

  private async refuse(r: Refusal, userId: string, chat: string, place: QuotaPlace, requestId?: string): Promise<QuotaRefusal> {
    // Told once per limit and day: for a chat's limit, once to the chat (every member reads it there).
    const tell = await this.deps.store.usage.tell(r.scope, r.subject, r.day.day, r.limit);
    if (requestId) await this.deps.store.usage.refused({ requestId, sessionKey: chat, userId, limit: r.limit, resetsAt: r.day.resetsAt });
    this.deps.refused?.(r.limit, place);
    this.deps.log.info(
      { user: userId, session: chat, limit: r.limit, used: r.used, day: r.day.day, zone: r.day.zone, resetsAt: r.day.resetsAt, place, told: tell },
      `${place === "door" ? "message" : "model call"} refused: ${r.limit} reached`,
    );
    return { limit: r.limit, text: r.text, resetsAt: r.day.resetsAt, tell };
  }
}
