// Every chat command, in one table: its name, who may use it in someone else's conversation, whether it interrupts
// the running turn, its line in the platforms' command menus, and what it does. Adding a command is adding an entry
// (and its line in docs/admin/commands.md); parsing, the owner rules, the worker's queueing and the menus read it.
import { budgetOf } from "../runtime/budget.js";
import { cancelTask, describeContext, describeStack, resetSession } from "../runtime/control.js";
import type { Orchestrator, RuntimeDeps } from "../runtime/orchestrator.js";
import type { RequestRecord, SessionWriter, Store } from "../store/store.js";
import { commandArgument, decisionText, skillsText, welcomeText } from "./command-texts.js";
import { forgetText, memoryText } from "./memory-commands.js";
import { usageText } from "./quota-door.js";
import { scheduleCommandText } from "./schedule-replies.js";
import type { Decision, DecisionResult } from "./types.js";

/** What a command's handler is given: the stored command, the session's writer, and the gateway's parts it may use. */
export interface CommandContext {
  request: RequestRecord;
  writer: SessionWriter;
  /** /cancel and /reset: the running turn was cut off just now, by this command (so there is something it stopped). */
  cut: boolean;
  runtime: RuntimeDeps;
  orchestrator: Orchestrator;
  store: Pick<Store, "memories" | "schedules">;
  now: () => number;
  /** SCHEDULES (absent: off) and DEFAULT_TIMEZONE. */
  schedules: { defaultZone?: string | undefined } | undefined;
  decide: (approvalId: string, userId: string, decision: Decision) => Promise<DecisionResult>;
  /** Ends the command with the gateway's answer. */
  reply(text: string): Promise<void>;
  /** Runs `work`; if it throws, the command fails with the gateway's failure reply. */
  guard(work: () => Promise<unknown>): Promise<void>;
}

export interface CommandSpec {
  /** "anyone": may be sent into someone else's conversation (it only reads, or touches the sender's own things). */
  who: "anyone" | "owner";
  /** Stops the running turn and goes before queued messages; the others are answered at once, beside the turn. */
  interrupts: boolean;
  /** The command's line in the platforms' menus (Telegram's setMyCommands); absent: not in the menu. */
  menu?: string;
  run(ctx: CommandContext): Promise<void>;
}

const reply = (text: (ctx: CommandContext) => Promise<string>) => (ctx: CommandContext) => ctx.guard(async () => ctx.reply(await text(ctx)));
const decide = (decision: Decision) => async (ctx: CommandContext) => {
  const id = commandArgument(ctx.request.text);
  await ctx.reply(decisionText(await ctx.decide(id, ctx.request.userId, decision), id));
};
const schedules = reply(({ store, now, schedules: on, request }) =>
  scheduleCommandText({ store, now, enabled: on !== undefined, defaultZone: on?.defaultZone }, request.userId, request.sessionKey, request.text),
);

/** In menu order. */
export const CHAT_COMMANDS = {
  start: { who: "owner", interrupts: false, menu: "What this bot can do", run: (ctx) => ctx.reply(welcomeText(ctx.runtime.catalog())) },
  help: { who: "owner", interrupts: false, run: (ctx) => ctx.reply(welcomeText(ctx.runtime.catalog())) },
  skills: { who: "anyone", interrupts: false, menu: "List the skills and agents", run: (ctx) => ctx.reply(skillsText(ctx.runtime.catalog())) },
  status: {
    who: "anyone",
    interrupts: false,
    menu: "Show who you are talking to",
    run: (ctx) => ctx.guard(() => describeStack(ctx.runtime, ctx.orchestrator, ctx.request, ctx.writer)),
  },
  context: {
    who: "anyone",
    interrupts: false,
    menu: "Context and token usage",
    run: (ctx) => ctx.guard(() => describeContext(ctx.runtime, ctx.orchestrator, ctx.request, ctx.writer, budgetOf(ctx.runtime.settings))),
  },
  memory: { who: "anyone", interrupts: false, menu: "What I remember about you", run: reply((ctx) => memoryText(ctx.store, ctx.request.userId)) },
  forget: { who: "anyone", interrupts: false, run: reply((ctx) => forgetText(ctx.store, ctx.request.userId, ctx.request.text)) },
  schedules: { who: "owner", interrupts: false, menu: "Your scheduled jobs in this chat", run: schedules },
  unschedule: { who: "owner", interrupts: false, run: schedules },
  timezone: { who: "owner", interrupts: false, run: schedules },
  usage: { who: "owner", interrupts: false, menu: "Your use today against the limits", run: reply((ctx) => usageText(ctx.runtime.quotas, ctx.request)) },
  approve: { who: "anyone", interrupts: false, run: decide("approve") },
  deny: { who: "anyone", interrupts: false, run: decide("deny") },
  cancel: {
    who: "owner",
    interrupts: true,
    menu: "Stop the running task",
    run: (ctx) => ctx.guard(() => cancelTask(ctx.runtime, ctx.orchestrator, ctx.request, ctx.writer, ctx.cut)),
  },
  reset: {
    who: "owner",
    interrupts: true,
    menu: "Start a fresh conversation",
    run: (ctx) => ctx.guard(() => resetSession(ctx.runtime, ctx.orchestrator, ctx.request, ctx.writer)),
  },
} as const satisfies Record<string, CommandSpec>;

export type ChatCommand = keyof typeof CHAT_COMMANDS;
