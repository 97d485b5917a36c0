// The allowlists checked again when a job is due: who and where, as TELEGRAM_ALLOWED_USERS, SLACK_ALLOWED_USERS and
// SLACK_ALLOWED_CHANNELS read them for messages (ids as the providers make them: telegram:<id>, slack:<team>:<user>).
import { describe, expect, it } from "vitest";
import { allowlistAdmission, type Allowlists } from "../../src/schedules/admission.js";

const lists = (over: Partial<Allowlists> = {}): Allowlists => ({ telegramUsers: [], slackUsers: [], slackChannels: [], ...over });
const tg = { ownerId: "telegram:1001", sessionKey: "telegram:-1001234:topic:7" };
const slack = { ownerId: "slack:T0001:U0ALICE", sessionKey: "slack:T0001:C0GENERAL:thread:1732700000.000100" };

describe("allowlistAdmission", () => {
  it("lets everyone through empty lists, and any source without an allowlist (terminal, HTTP API)", () => {
    const admits = allowlistAdmission(lists());
    expect([tg, slack].map(admits)).toEqual([null, null]);
    const strict = allowlistAdmission(lists({ telegramUsers: ["7"], slackUsers: ["U7"], slackChannels: ["C7"] }));
    expect(strict({ ownerId: "console:alice", sessionKey: "console:local" })).toBeNull();
    expect(strict({ ownerId: "http:alice", sessionKey: "http:alice:s1" })).toBeNull();
  });

  it("refuses a Telegram owner whose id is no longer listed", () => {
    expect(allowlistAdmission(lists({ telegramUsers: ["1001", "1002"] }))(tg)).toBeNull();
    expect(allowlistAdmission(lists({ telegramUsers: ["1002"] }))(tg)).toBe("its owner telegram:1001 is no longer on TELEGRAM_ALLOWED_USERS");
  });

  it("cannot tell who an @username entry is, so a list holding one lets an unlisted id through", () => {
    expect(allowlistAdmission(lists({ telegramUsers: ["1002", "@alice"] }))(tg)).toBeNull();
  });

  it("refuses a Slack owner no longer on SLACK_ALLOWED_USERS, or a channel no longer on SLACK_ALLOWED_CHANNELS", () => {
    expect(allowlistAdmission(lists({ slackUsers: ["U0ALICE"], slackChannels: ["C0GENERAL"] }))(slack)).toBeNull();
    expect(allowlistAdmission(lists({ slackUsers: ["U0BOB"] }))(slack)).toBe("its owner slack:T0001:U0ALICE is no longer on SLACK_ALLOWED_USERS");
    expect(allowlistAdmission(lists({ slackChannels: ["C0RANDOM"] }))(slack)).toBe("its channel C0GENERAL is no longer on SLACK_ALLOWED_CHANNELS");
    // A direct message is checked by its channel id too, as a message there is.
    expect(allowlistAdmission(lists({ slackChannels: ["C0GENERAL"] }))({ ownerId: slack.ownerId, sessionKey: "slack:T0001:D0DM" })).toBe(
      "its channel D0DM is no longer on SLACK_ALLOWED_CHANNELS",
    );
  });
});
