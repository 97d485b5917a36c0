// The requests Slack waits on an answer for (3 s): slash commands and button clicks. /switchboard and the approval
// buttons are Switchboard's; anything else that reaches the app is acknowledged too, so Slack shows no error.
import type { App } from "@slack/bolt";
import type { Logger } from "pino";
import { decisionText, userId, type GatewayFacade as Gateway } from "../../src/gateway/index.js";
import { isAllowed, slackSessionKey } from "./inbound.js";

export const NOT_ALLOWED_USER = "Sorry, this bot is private and you are not on its list of users.";
export const NOT_ALLOWED_CHANNEL = "Sorry, I'm not enabled in this channel.";
const UNKNOWN_COMMAND = (command: string) => `I don't know ${command}. Try /switchboard cancel | status | reset.`;

export interface InteractivityDeps {
  gateway: Gateway;
  allowedUsers: readonly string[];
  allowedChannels: readonly string[];
  log: Logger;
  /** The workspace the bot token belongs to (known once started). */
  teamId: () => string;
}

export function installInteractivity(app: App, deps: InteractivityDeps): void {
  app.command("/switchboard", async ({ command, ack, respond }) => {
    await ack();
    // The same gate as messages: a refused user or channel is told privately, and nothing reaches the
    // gateway (whose reply would be posted in the channel for everyone).
    if (!isAllowed(deps.allowedUsers, command.user_id)) {
      await respond({ response_type: "ephemeral", text: NOT_ALLOWED_USER });
      return;
    }
    if (!isAllowed(deps.allowedChannels, command.channel_id)) {
      await respond({ response_type: "ephemeral", text: NOT_ALLOWED_CHANNEL });
      return;
    }
    const sub = command.text.trim().toLowerCase().split(/\s+/)[0] ?? "";
    if (!["cancel", "status", "reset"].includes(sub)) {
      await respond({ response_type: "ephemeral", text: "Usage: /switchboard cancel | status | reset" });
      return;
    }
    const team = command.team_id;
    const user = userId("slack", team, command.user_id);
    const place = slackSessionKey(team, command.channel_id);
    const key = (await deps.gateway.sessionOfActiveTask(place, user)) ?? place;
    const result = await deps.gateway.submit({
      sessionKey: key,
      messageId: `slash:${command.trigger_id}`,
      userId: user,
      text: `/${sub}`,
    });
    if (result.status === "refused" || (result.status === "limited" && !result.quiet)) await respond({ response_type: "ephemeral", text: result.text });
  });
  // Slack waits 3 s for every command it sends us: one configured in the app but unknown here is answered too.
  app.command(/^(?!\/switchboard$)/, async ({ command, ack }) => {
    await ack({ response_type: "ephemeral", text: UNKNOWN_COMMAND(command.command) });
  });
  app.action(/^switchboard_(approve|deny)$/, async ({ action, body, ack, client, respond }) => {
    await ack();
    const id = "value" in action && typeof action.value === "string" ? action.value : "";
    const decision = "action_id" in action && action.action_id === "switchboard_approve" ? "approve" : "deny";
    // The clicking user's own team, as their messages carry it: one Slack user id means one person per team only.
    const clicker = body as { user: { id: string; team_id?: string }; team?: { id?: string } | null };
    const team = clicker.user.team_id ?? clicker.team?.id ?? deps.teamId();
    const result = await deps.gateway.decide(id, userId("slack", team, body.user.id), decision);
    if (result.status === "approved" || result.status === "denied") {
      const container = (body as { container?: { channel_id?: string; message_ts?: string } }).container;
      const message = (body as { message?: { text?: string } }).message;
      if (container?.channel_id && container.message_ts) {
        // Replace the buttons with the decision, so nobody clicks a stale button.
        await client.chat
          .update({ channel: container.channel_id, ts: container.message_ts, text: `${message?.text ?? ""}\n— ${result.status} by <@${body.user.id}>`, blocks: [] })
          .catch((error: unknown) => deps.log.debug({ err: error }, "could not update the approval message"));
      }
    } else {
      await respond({ response_type: "ephemeral", replace_original: false, text: decisionText(result, id) });
    }
  });
  // Buttons from other messages (a link button, an old prompt's id): acknowledged, so Slack shows no error.
  app.action(/^(?!switchboard_(approve|deny)$)/, async ({ ack }) => {
    await ack();
  });
}
