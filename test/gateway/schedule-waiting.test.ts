// A scheduled run that falls due while the conversation's task waits for the user (a child asked a question) or
// for an approval: the run is not what the user said, so it is never fed to the waiting frame as their answer. It
// waits in the inbox, the user's answer goes past it, and it runs as its own task once the waiting one ends; if
// the task still waits SCHEDULE_GRACE after the due time, the run is skipped and the owner told.
import { afterEach, describe, expect, it } from "vitest";
import { lastUserText, reply, text, toolUse } from "../fakes/anthropic/server.js";
import { skillFile, startHarness, type Harness, type HarnessOptions } from "../helpers/harness.js";
import { manualTimeouts } from "../helpers/timers.js";
import { bankTools, heldTool } from "../helpers/tools.js";

let h: Harness;
afterEach(async () => {
  await h?.close();
  h = undefined!;
});

const START = Date.parse("2026-11-27T10:00:00Z");
const GRACE = 3_600_000;

/** A harness whose clocks the test moves, holding a one-shot job `id` in console:t, due a minute after START. */
async function withJob(id: string, instruction: string, options: HarnessOptions) {
  const clock = { t: START };
  const timeouts = manualTimeouts();
  h = await startHarness({
    ...options,
    clock: { now: () => clock.t },
    schedules: { now: () => clock.t, timers: timeouts.timers, graceMs: GRACE, defaultZone: "UTC" },
  });
  const due = START + 60_000;
  const job = {
    id,
    ownerId: "alice",
    sessionKey: "console:t",
    instruction,
    schedule: { kind: "once" as const, at: due },
    timezone: "UTC",
    nextDue: due,
    createdByTask: null,
  };
  await h.store.schedules.create(job, 20);
  return { clock, timeouts };
}

/** The job falls due: the scheduler looks, and what it submitted is handled. */
async function fallDue(clock: { t: number }) {
  clock.t = START + 60_000;
  h.scheduler!.start();
  await h.scheduler!.idle();
}

async function waitingInterview() {
  const { clock, timeouts } = await withJob("sch_tea", "Remind Alice to make tea", {
    files: skillFile("interview", "Ask the user for their name, then complete with it."),
  });
  h.fake.script(reply(toolUse("use_skill", { name: "interview", message: "get the name" })), text("What is your name?"));
  expect(await h.say("interview me", { session: "t" })).toEqual(["skill:interview: What is your name?"]);
  expect((await h.store.tasks.active("console:t"))?.status).toBe("waiting_user");
  // The job falls due while the child waits for the answer.
  await fallDue(clock);
  await h.gateway.idle();
  return { clock, timeouts };
}

const runOf = async () => (await h.store.requests.ofSession("console:t")).find((r) => r.externalId.startsWith("schedule:"))!;

describe("a scheduled run while a child waits for the user's answer", () => {
  it("is not given to the child as the answer; it runs as its own task once the waiting one ends", async () => {
    await waitingInterview();
    // Stored, and the job moved on, but nothing ran and nothing was said: the child's question is still open.
    expect(h.fake.accepted()).toHaveLength(2);
    expect(await runOf()).toMatchObject({ status: "pending", userId: "alice" });
    expect(await h.store.schedules.get("sch_tea")).toMatchObject({ status: "done", lastResult: "run" });
    expect(h.seen.map((m) => m.text)).toEqual(["What is your name?"]);

    // The user's answer goes to the child (not behind the run); then the run is a task of its own.
    h.fake.script(reply(toolUse("complete", { result: "Alice" })), text("Nice to meet you, Alice."), text("Time for tea, Alice!"));
    const before = h.seen.length;
    await h.gateway.submit({ sessionKey: "console:t", messageId: "m-answer", userId: "alice", text: "Alice" });
    await h.gateway.idle();
    const calls = h.fake.accepted();
    expect(lastUserText(calls[2]!)).toBe("Alice");
    expect(JSON.stringify(calls[2]!.messages)).not.toContain("Scheduled run");
    expect(lastUserText(calls[4]!)).toContain("[Scheduled run of job sch_tea");
    expect(h.seen.slice(before).map((m) => `${m.agent}: ${m.text}`)).toEqual(["main: Nice to meet you, Alice.", "main: Time for tea, Alice!"]);
    const tasks = await h.store.tasks.ofSession("console:t");
    expect(tasks.map((t) => t.status)).toEqual(["completed", "completed"]);
    const run = await runOf();
    expect(run).toMatchObject({ status: "done", taskId: tasks[1]!.id });
  });

  it("goes ahead when the owner ends the waiting task with /cancel", async () => {
    await waitingInterview();
    h.fake.script(text("Time for tea, Alice!"));
    const before = h.seen.length;
    await h.gateway.submit({ sessionKey: "console:t", messageId: "m-cancel", userId: "alice", text: "/cancel" });
    await h.gateway.idle();
    expect(h.seen.slice(before).map((m) => `${m.agent}: ${m.text}`)).toEqual([expect.stringMatching(/^switchboard: Cancelled/), "main: Time for tea, Alice!"]);
    expect(lastUserText(h.fake.accepted()[2]!)).toContain("[Scheduled run of job sch_tea");
    expect((await h.store.tasks.ofSession("console:t")).map((t) => t.status)).toEqual(["cancelled", "completed"]);
  });

  it("is skipped, and the owner told, when the child still waits SCHEDULE_GRACE after the due time", async () => {
    const { clock } = await waitingInterview();
    clock.t = START + 60_000 + GRACE - 1;
    await h.gateway.poll();
    await h.gateway.idle();
    expect(await runOf()).toMatchObject({ status: "pending" });

    clock.t = START + 60_000 + GRACE;
    await h.gateway.poll();
    await h.gateway.idle();
    expect(h.seen.slice(1).map((m) => `${m.agent}: ${m.text}`)).toEqual([
      "switchboard: Skipped the scheduled run of job sch_tea due 2026-11-27T10:01:00.000Z: this chat was waiting for your answer for 1 h after it was due. /schedules lists your jobs.",
    ]);
    expect(await runOf()).toMatchObject({ status: "done" });
    expect(h.fake.accepted()).toHaveLength(2);

    // The child's question is still open: the answer still reaches it.
    h.fake.script(reply(toolUse("complete", { result: "Alice" })), text("Nice to meet you, Alice."));
    await h.gateway.submit({ sessionKey: "console:t", messageId: "m-answer", userId: "alice", text: "Alice" });
    await h.gateway.idle();
    expect(lastUserText(h.fake.accepted()[2]!)).toBe("Alice");
    expect(h.seen.at(-1)?.text).toBe("Nice to meet you, Alice.");
  });
});

describe("a scheduled run while an approval prompt is open", () => {
  it("is not answered with “I'm waiting for your approval”: it runs after the decision, as its own task", async () => {
    const { clock } = await withJob("sch_bal", "Tell Alice her balance", { tools: bankTools().list });
    h.fake.script(reply(toolUse("transfer", { amount: 50 }, "toolu_t")));
    const prompt = (await h.send("send Bob 50")).find((m) => m.approvalId)!;
    expect((await h.store.tasks.active("console:t"))?.status).toBe("waiting_approval");
    await fallDue(clock);
    await h.gateway.idle();
    expect(h.seen.map((m) => m.text)).toEqual([prompt.text]);
    expect(await runOf()).toMatchObject({ status: "pending" });

    h.fake.script(text("Sent 50 EUR to Bob."), text("Your balance is 50 EUR."));
    expect(await h.gateway.decide(prompt.approvalId!, "alice", "approve")).toMatchObject({ status: "approved" });
    await h.gateway.idle();
    expect(h.seen.slice(1).map((m) => `${m.agent}: ${m.text}`)).toEqual(["main: Sent 50 EUR to Bob.", "main: Your balance is 50 EUR."]);
    expect(lastUserText(h.fake.accepted()[2]!)).toContain("[Scheduled run of job sch_bal");
    expect((await h.store.tasks.ofSession("console:t")).map((t) => t.status)).toEqual(["completed", "completed"]);
  });

  it("says the approval was what it waited for, when it is skipped past the grace", async () => {
    const { skippedWhileWaiting } = await import("../../src/gateway/held-runs.js");
    expect(skippedWhileWaiting("sch_x", START, "waiting_approval", 5_400_000)).toBe(
      "Skipped the scheduled run of job sch_x due 2026-11-27T10:00:00.000Z: this chat was waiting for your approval for 90 min after it was due. /schedules lists your jobs.",
    );
  });
});

describe("a scheduled run that falls due while the owner's turn runs, with MID_TURN=steer", () => {
  it("does not join the running frame as the owner's words, nor tell them it waits: it runs next, as its own task", async () => {
    const search = heldTool();
    const { clock } = await withJob("sch_tea", "Remind Alice to make tea", { tools: [search.tool], midTurn: "steer" });
    h.fake.script(reply(toolUse("search_flights", {}, "toolu_s")), text("3 flights to Lisbon."), text("Time for tea, Alice!"));
    await h.gateway.submit({ sessionKey: "console:t", messageId: "m1", userId: "alice", text: "find flights to Lisbon" });
    await search.started;
    await fallDue(clock);
    expect(await runOf()).toMatchObject({ status: "pending" });
    search.release();
    await h.gateway.idle();
    const calls = h.fake.accepted();
    expect(JSON.stringify(calls[1]!.messages)).not.toContain("Scheduled run");
    expect(lastUserText(calls[2]!)).toContain("[Scheduled run of job sch_tea");
    expect(h.seen.map((m) => `${m.agent}: ${m.text}`)).toEqual(["main: 3 flights to Lisbon.", "main: Time for tea, Alice!"]);
    expect((await h.store.tasks.ofSession("console:t")).map((t) => t.status)).toEqual(["completed", "completed"]);
  });
});
