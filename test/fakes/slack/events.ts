// Requests Slack sends to an app's HTTP endpoint (Bolt's HTTPReceiver at
// /slack/events): Events API envelopes, url_verification, slash commands and
// interactivity payloads, signed the way Slack signs them
// (https://docs.slack.dev/authentication/verifying-requests-from-slack):
//
//   x-slack-request-timestamp: <unix seconds>
//   x-slack-signature: v0=<hex HMAC-SHA256(signing secret, "v0:<timestamp>:<raw body>")>
//
// Builders return the raw body (JSON, or form-urlencoded for commands and
// interactivity) so the exact bytes that get signed are the bytes sent.

import { createHmac, randomBytes, randomUUID } from "node:crypto";
import { request } from "node:http";
import { APP_ID, BOT_USER_ID, TEAM_ID } from "./methods.js";

export interface SlackSigner {
  secret: string;
  /** Seconds since the epoch; default the wall clock. */
  now?: () => number;
}

export type SlackContentType = "application/json" | "application/x-www-form-urlencoded";

export interface SignedResponse {
  status: number;
  body: string;
  headers: Record<string, string>;
}

/** Slack's deprecated verification token, still sent in every payload. */
export const VERIFICATION_TOKEN = "fake-verification-token";

/** "v0=" + hex(HMAC-SHA256(secret, `v0:${timestamp}:${body}`)). */
export function signature(secret: string, timestamp: number, body: string): string {
  return "v0=" + createHmac("sha256", secret).update(`v0:${timestamp}:${body}`).digest("hex");
}

/** The headers Slack sends with a body (signature, timestamp, content type). */
export function signedHeaders(secret: string, body: string, contentType: SlackContentType, timestamp = Math.floor(Date.now() / 1000)): Record<string, string> {
  return {
    "content-type": contentType,
    "x-slack-request-timestamp": String(timestamp),
    "x-slack-signature": signature(secret, timestamp, body),
  };
}

/**
 * POSTs a signed body to `url` as Slack does. `timestamp` overrides the signing time (e.g. 6 minutes
 * ago for a stale request); `badSignature` sends a signature made with the wrong secret; `retryNum` /
 * `retryReason` add the headers of a redelivery. One connection per request (no keep-alive), so a
 * receiver can stop right after.
 */
export function sendSigned(
  url: string,
  body: string,
  contentType: SlackContentType,
  opts: { secret: string; timestamp?: number; retryNum?: number; retryReason?: string; badSignature?: boolean },
): Promise<SignedResponse> {
  const timestamp = opts.timestamp ?? Math.floor(Date.now() / 1000);
  const headers: Record<string, string> = {
    ...signedHeaders(opts.badSignature ? `${opts.secret}-wrong` : opts.secret, body, contentType, timestamp),
    "content-length": String(Buffer.byteLength(body)),
    "user-agent": "Slackbot 1.0 (+https://api.slack.com/robots)",
    connection: "close",
  };
  if (opts.retryNum !== undefined) headers["x-slack-retry-num"] = String(opts.retryNum);
  if (opts.retryReason !== undefined) headers["x-slack-retry-reason"] = opts.retryReason;
  return new Promise((resolve, reject) => {
    const req = request(url, { method: "POST", headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("error", reject);
      res.on("end", () => {
        const out: Record<string, string> = {};
        for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) out[k] = Array.isArray(v) ? v.join(", ") : v;
        resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8"), headers: out });
      });
    });
    req.on("error", reject);
    req.end(body);
  });
}

/** A sender bound to one endpoint and secret: `send(eventCallback(...))` picks the content type from the body. */
export function slackSender(url: string, signer: SlackSigner) {
  return (body: string, opts: { timestamp?: number; retryNum?: number; retryReason?: string; badSignature?: boolean } = {}) =>
    sendSigned(url, body, body.trimStart().startsWith("{") ? "application/json" : "application/x-www-form-urlencoded", {
      secret: signer.secret,
      ...(signer.now && { timestamp: signer.now() }),
      ...opts,
    });
}

const randomId = (prefix: string, bytes = 5) => prefix + randomBytes(bytes).toString("hex").toUpperCase();

/** JSON of an event_callback envelope around `event`, shaped like Slack's. */
export function eventCallback(event: Record<string, unknown>, opts: { eventId?: string; teamId?: string; apiAppId?: string; eventTime?: number } = {}): string {
  const teamId = opts.teamId ?? TEAM_ID;
  return JSON.stringify({
    token: VERIFICATION_TOKEN,
    team_id: teamId,
    context_team_id: teamId,
    context_enterprise_id: null,
    api_app_id: opts.apiAppId ?? APP_ID,
    event,
    type: "event_callback",
    event_id: opts.eventId ?? randomId("Ev0", 4),
    event_time: opts.eventTime ?? Math.floor(Date.now() / 1000),
    authorizations: [{ enterprise_id: null, team_id: teamId, user_id: BOT_USER_ID, is_bot: true, is_enterprise_install: false }],
    is_ext_shared_channel: false,
    event_context: `4-${randomBytes(12).toString("base64url")}`,
  });
}

export function urlVerification(challenge: string): string {
  return JSON.stringify({ token: VERIFICATION_TOKEN, challenge, type: "url_verification" });
}

/** Form body of a slash command, fields in Slack's order. */
export function slashCommand(fields: {
  command: string;
  text: string;
  user_id: string;
  channel_id: string;
  team_id?: string;
  trigger_id?: string;
  response_url?: string;
  user_name?: string;
  channel_name?: string;
}): string {
  const teamId = fields.team_id ?? TEAM_ID;
  return new URLSearchParams({
    token: VERIFICATION_TOKEN,
    team_id: teamId,
    team_domain: "test-team",
    channel_id: fields.channel_id,
    channel_name: fields.channel_name ?? (fields.channel_id.startsWith("D") ? "directmessage" : fields.channel_id.toLowerCase()),
    user_id: fields.user_id,
    user_name: fields.user_name ?? fields.user_id.toLowerCase(),
    command: fields.command,
    text: fields.text,
    api_app_id: APP_ID,
    is_enterprise_install: "false",
    response_url: fields.response_url ?? `https://hooks.slack.com/commands/${teamId}/${Date.now()}/${randomBytes(12).toString("hex")}`,
    trigger_id: fields.trigger_id ?? `${Date.now()}.${randomBytes(6).toString("hex")}`,
  }).toString();
}

/** Form body `payload=<json>` of an interactivity request (block_actions, view_submission, shortcut, …). */
export function interactivity(payload: Record<string, unknown>): string {
  return new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
}

/** An app_mention event (text includes the `<@U0BOT>` mention as the caller writes it). */
export function appMention(o: { channel: string; user: string; text: string; ts: string; thread_ts?: string; team?: string }): Record<string, unknown> {
  return {
    type: "app_mention",
    client_msg_id: randomUUID(),
    text: o.text,
    user: o.user,
    ts: o.ts,
    team: o.team ?? TEAM_ID,
    ...(o.thread_ts !== undefined && { thread_ts: o.thread_ts }),
    channel: o.channel,
    event_ts: o.ts,
  };
}

/**
 * A `message` event. A user's message carries `user` and `client_msg_id`; a bot's carries `bot_id`
 * (and `user` if given); `subtype` is passed through (e.g. "message_changed", "bot_message").
 */
export function messageEvent(o: {
  channel: string;
  user?: string;
  text: string;
  ts: string;
  thread_ts?: string;
  channel_type: "im" | "channel" | "group" | "mpim";
  subtype?: string;
  bot_id?: string;
  team?: string;
  parent_user_id?: string;
}): Record<string, unknown> {
  return {
    type: "message",
    ...(o.subtype !== undefined && { subtype: o.subtype }),
    ...(o.user !== undefined && o.bot_id === undefined && o.subtype === undefined && { client_msg_id: randomUUID() }),
    text: o.text,
    ...(o.user !== undefined && { user: o.user }),
    ...(o.bot_id !== undefined && { bot_id: o.bot_id }),
    ts: o.ts,
    team: o.team ?? TEAM_ID,
    ...(o.thread_ts !== undefined && { thread_ts: o.thread_ts }),
    ...(o.parent_user_id !== undefined && { parent_user_id: o.parent_user_id }),
    channel: o.channel,
    event_ts: o.ts,
    channel_type: o.channel_type,
  };
}
