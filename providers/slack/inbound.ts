import { sessionKey } from "../../src/gateway/index.js";

/** `slack:<team>:<channel>` for a DM, `slack:<team>:<channel>:thread:<root ts>` for a channel conversation. */
export function slackSessionKey(team: string, channel: string, threadRoot?: string): string {
  return threadRoot ? sessionKey("slack", team, channel, "thread", threadRoot) : sessionKey("slack", team, channel);
}

/** The channel and thread a session key points back to. Slack ids and ts survive key sanitising unchanged. */
export function parseSlackKey(key: string): { team: string; channel: string; threadTs?: string } {
  const [, team, channel, kind, ts] = key.split(":");
  return kind === "thread" ? { team: team!, channel: channel!, threadTs: ts! } : { team: team!, channel: channel! };
}

/** Drops the bot's own `<@U…>` mention and tidies the spaces it leaves. */
export function stripMention(text: string, botUserId: string): string {
  const cleaned = text
    .replaceAll(`<@${botUserId}>`, "")
    .replace(/\s{2,}/g, " ")
    .trim();
  return cleaned === "" ? text.trim() : cleaned;
}

export function isAllowed(allowed: readonly string[], id: string | undefined): boolean {
  return allowed.length === 0 || (id !== undefined && allowed.includes(id));
}

/**
 * The workspace whose installation received an event: the one a conversation belongs to. In a Slack Connect
 * channel the envelope's `team_id` (and `context_team_id`, and the event's `team`) can name the sender's
 * workspace; `authorizations[0]` is the installation the event was delivered for, as Bolt itself reads it.
 * On an org-wide install its `team_id` is null and the envelope's ids are all there is.
 */
export function installTeam(body: unknown, fallback: string): string {
  const b = (typeof body === "object" && body !== null ? body : {}) as {
    authorizations?: Array<{ team_id?: string | null }>;
    context_team_id?: string | null;
    team_id?: string | null;
  };
  return b.authorizations?.[0]?.team_id || b.context_team_id || b.team_id || fallback;
}

/**
 * The sender's own workspace (or Enterprise Grid org): `user_team` where Slack gives it (Slack Connect), else the
 * event's `team`. User ids are unique per workspace only, so this is part of who someone is.
 */
export function senderTeam(event: { user_team?: unknown; team?: unknown }, fallback: string): string {
  if (typeof event.user_team === "string" && event.user_team !== "") return event.user_team;
  if (typeof event.team === "string" && event.team !== "") return event.team;
  return fallback;
}

/** A set that forgets its oldest entries past `limit`: memory for "seen" and "already told" that cannot grow forever. */
export class RecentSet {
  private readonly items = new Set<string>();
  constructor(private readonly limit: number) {}

  has(item: string): boolean {
    return this.items.has(item);
  }

  add(item: string): void {
    this.items.delete(item);
    this.items.add(item);
    if (this.items.size > this.limit) this.items.delete(this.items.values().next().value!);
  }

  delete(item: string): void {
    this.items.delete(item);
  }
}
