// "The same allowlists apply as for messages", at run time: a job scheduled by someone who has since been taken off
// TELEGRAM_ALLOWED_USERS or SLACK_ALLOWED_USERS, or in a Slack channel since taken off SLACK_ALLOWED_CHANNELS, must
// not keep starting tasks. Checked against the job's owner id and conversation key, as the providers made them.

/** Null: the run may start; otherwise why not (for the log and the job's last result). */
export type RunAdmission = (job: { ownerId: string; sessionKey: string }) => string | null;

/** The allowlists a message is checked against (config.ts), read at each check. Empty: everyone. */
export interface Allowlists {
  telegramUsers: readonly string[];
  slackUsers: readonly string[];
  slackChannels: readonly string[];
}

export function allowlistAdmission(lists: Allowlists): RunAdmission {
  return ({ ownerId, sessionKey }) => {
    const [source, ...owner] = ownerId.split(":");
    if (source === "telegram") return telegramOwner(lists.telegramUsers, owner[0]);
    if (source === "slack") {
      // `slack:<team>:<user>` and `slack:<team>:<channel>[:thread:<ts>]` (providers/slack/inbound.ts).
      const user = owner[1];
      if (lists.slackUsers.length > 0 && (user === undefined || !lists.slackUsers.includes(user))) {
        return `its owner ${ownerId} is no longer on SLACK_ALLOWED_USERS`;
      }
      const channel = sessionKey.startsWith("slack:") ? sessionKey.split(":")[2] : undefined;
      if (lists.slackChannels.length > 0 && (channel === undefined || !lists.slackChannels.includes(channel))) {
        return `its channel ${channel ?? sessionKey} is no longer on SLACK_ALLOWED_CHANNELS`;
      }
    }
    return null;
  };
}

/**
 * A Telegram owner (`telegram:<numeric id>`) against TELEGRAM_ALLOWED_USERS. An `@username` entry names someone by
 * a handle a job does not record (it can change), so a list that holds any lets an id it does not list through: only
 * an owner whose id is missing from a list of ids alone is known to be off it.
 */
function telegramOwner(allowed: readonly string[], id: string | undefined): string | null {
  if (allowed.length === 0 || (id !== undefined && allowed.includes(id))) return null;
  if (allowed.some((entry) => entry.startsWith("@"))) return null;
  return `its owner telegram:${id ?? "?"} is no longer on TELEGRAM_ALLOWED_USERS`;
}
