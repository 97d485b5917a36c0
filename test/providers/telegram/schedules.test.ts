// Scheduled jobs on Telegram through real grammY and the fake Bot API: a job scheduled in a forum topic fires in that
// topic, as the scheduler's run of its owner; a run whose chat blocked the bot pauses its job (Bot API 403).
import { describe, expect, it } from "vitest";
import { lastUserText, reply, text, toolUse } from "../../fakes/anthropic/server.js";
import { TG_ERRORS } from "../../fakes/telegram/server.js";
import { ALICE, useTelegramWorld } from "../../helpers/telegram-world.js";
import { manualTimeouts } from "../../helpers/timers.js";
import { captureLog } from "../../store/postgres/log-capture.js";
import { allowlistAdmission } from "../../../src/schedules/admission.js";

const GROUP = -1001234;
const world = useTelegramWorld();

async function boot() {
  const clock = { t: Date.parse("2026-11-27T10:00:00Z") };
  const timeouts = manualTimeouts();
  const { h } = await world.boot({}, [], { schedules: { now: () => clock.t, timers: timeouts.timers, defaultZone: "UTC" } });
  return { h, clock, timeouts };
}

describe("scheduled jobs on Telegram", () => {
  it("a one-shot job scheduled in a forum topic fires once in that topic", async () => {
    const { h, clock, timeouts } = await boot();
    const forum = { chatId: GROUP, chatType: "supergroup" as const, isForum: true, threadId: 7 };
    world.model.script(reply(toolUse("schedule", { instruction: "Tell the topic the build is due", in_seconds: 120 })), text("Scheduled."));
    world.tg.userMessage({ ...forum, fromId: ALICE, text: `@${world.tg.botUsername} remind us in two minutes` });
    expect((await world.nth(GROUP, 1)).text).toBe("Scheduled.");
    const [job] = await h.store.schedules.list(`telegram:${ALICE}`);
    expect(job?.sessionKey).toBe(`telegram:${GROUP}:topic:7`);

    clock.t += 120_000;
    world.model.script(text("⏰ The build is due."));
    h.scheduler!.start();
    await h.scheduler!.idle();
    const sent = await world.nth(GROUP, 2);
    expect([sent.text, sent.message_thread_id]).toEqual(["⏰ The build is due.", 7]);
    expect(lastUserText(world.model.accepted()[2]!)).toContain(`[Scheduled run of job ${job!.id}`);
    timeouts.fireAll();
    await h.scheduler!.idle();
    await h.gateway.idle();
    expect(world.tg.sent(GROUP)).toHaveLength(2);
  });

  it("a run whose reply the Bot API refuses for good (bot blocked) pauses its repeating job", async () => {
    const { h, clock, timeouts } = await boot();
    world.model.script(reply(toolUse("schedule", { instruction: "Daily digest", cron: "0 11 * * *" })), text("Every day at 11."));
    world.tg.userMessage({ chatId: ALICE, fromId: ALICE, text: "digest every day at 11" });
    expect((await world.nth(ALICE, 1)).text).toBe("Every day at 11.");
    const [job] = await h.store.schedules.list(`telegram:${ALICE}`);

    world.tg.failChat(ALICE, TG_ERRORS.blocked);
    clock.t = Date.parse("2026-11-27T11:00:00Z");
    world.model.script(text("Here is your digest."));
    h.scheduler!.start();
    await h.scheduler!.idle();
    await h.gateway.idle();
    await expect.poll(async () => (await h.store.schedules.get(job!.id))?.status).toBe("paused");
    expect((await h.store.schedules.get(job!.id))?.lastResult).toBe("paused: its reply could not be delivered (Forbidden: bot was blocked by the user)");

    // The next day's run does not start a task nobody can read.
    clock.t = Date.parse("2026-11-28T11:00:00Z");
    timeouts.fireAll();
    await h.scheduler!.idle();
    await h.gateway.idle();
    expect(world.model.accepted()).toHaveLength(3);
  });

  it("a job whose owner was taken off TELEGRAM_ALLOWED_USERS since scheduling is paused at its due time, not run, and logged once", async () => {
    const clock = { t: Date.parse("2026-11-27T10:00:00Z") };
    const timeouts = manualTimeouts();
    // The operator's list, read at each check (as a restart with the new value would read it).
    const allowed = [String(ALICE)];
    const captured = captureLog();
    const admits = allowlistAdmission({ telegramUsers: allowed, slackUsers: [], slackChannels: [] });
    const { h } = await world.boot({ allowedUsers: allowed }, [], {
      schedules: { now: () => clock.t, timers: timeouts.timers, defaultZone: "UTC", admits, log: captured.log },
    });
    world.model.script(reply(toolUse("schedule", { instruction: "Daily digest", cron: "0 11 * * *" })), text("Every day at 11."));
    world.tg.userMessage({ chatId: ALICE, fromId: ALICE, text: "digest every day at 11" });
    expect((await world.nth(ALICE, 1)).text).toBe("Every day at 11.");
    const [job] = await h.store.schedules.list(`telegram:${ALICE}`);

    allowed.splice(0, allowed.length, "1002");
    clock.t = Date.parse("2026-11-27T11:00:00Z");
    h.scheduler!.start();
    await h.scheduler!.idle();
    await h.gateway.idle();
    expect(await h.store.schedules.get(job!.id)).toMatchObject({
      status: "paused",
      lastResult: `paused: its owner telegram:${ALICE} is no longer on TELEGRAM_ALLOWED_USERS`,
    });
    // The next day: still nothing, and nothing more logged.
    clock.t = Date.parse("2026-11-28T11:00:00Z");
    timeouts.fireAll();
    await h.scheduler!.idle();
    await h.gateway.idle();
    expect(world.model.accepted()).toHaveLength(2);
    expect(world.tg.sent(ALICE)).toHaveLength(1);
    expect(await h.store.requests.ofSession(`telegram:${ALICE}`)).toHaveLength(1);
    expect(captured.lines.filter((l) => l.msg === "scheduled job paused: no longer allowed")).toEqual([
      expect.objectContaining({ job: job!.id, reason: `its owner telegram:${ALICE} is no longer on TELEGRAM_ALLOWED_USERS` }),
    ]);
  });
});
