import { sessionKey } from "../../src/gateway/session-key.js";

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
  const cleaned = text.replaceAll(`<@${botUserId}>`, "").replace(/\s{2,}/g, " ").trim();
  return cleaned === "" ? text.trim() : cleaned;
}

export function isAllowed(allowed: readonly string[], id: string | undefined): boolean {
  return allowed.length === 0 || (id !== undefined && allowed.includes(id));
}
