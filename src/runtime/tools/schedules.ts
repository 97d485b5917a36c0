// The scheduling tools for main (and for children that declare them): schedule, list_schedules, cancel_schedule.
// They act for the task's owner in the task's conversation: a job's runs start there, owned by them.
import type { Ids } from "../deps.js";
import type { ScheduleJobRecord, Store } from "../../store/store.js";
import { jobsText, runText, type ListedJob } from "../../schedules/describe.js";
import { CANCEL_SCHEDULE_TOOL, checkCancelInput, checkScheduleInput, LIST_SCHEDULES_TOOL, SCHEDULE_TOOL } from "../../schedules/input.js";
import { jobLimitProblem } from "../../schedules/limits.js";
import { effectiveZone } from "../../schedules/zone.js";
import type { Tool, ToolContext, ToolOutput } from "./tool.js";

export const SCHEDULE_TOOLS = [SCHEDULE_TOOL.name, LIST_SCHEDULES_TOOL.name, CANCEL_SCHEDULE_TOOL.name] as const;

export interface ScheduleToolDeps {
  store: () => Pick<Store, "schedules">;
  ids: Ids;
  now: () => number;
  maxPerUser: number;
  /** DEFAULT_TIMEZONE; unset: UTC. */
  defaultZone?: string | undefined;
  /** A job was stored: the scheduler looks again (a job due in seconds runs on time). */
  onScheduled?: (() => void) | undefined;
  /** Where the session's current request is in the traces (a W3C traceparent), kept with the job for its runs' links. */
  traceparent?: ((sessionKey: string) => string | undefined) | undefined;
}

const fail = (content: string): ToolOutput => ({ content, isError: true });

/** A job id a person can type: `sch_` and ten letters or digits from the id source. */
export function newJobId(ids: Ids): string {
  const raw = ids.next("sch").replace(/[^A-Za-z0-9]/g, "");
  return `sch_${raw.slice(-10) || "0"}`;
}

/** A stored job as the listings show it. */
export function listed(job: ScheduleJobRecord): ListedJob {
  return { ...job, pausedBecause: job.status === "paused" ? (job.lastResult ?? "paused").replace(/^paused: /, "") : null };
}

/** The user's zone: /timezone, else DEFAULT_TIMEZONE, else UTC. */
export async function userZone(deps: Pick<ScheduleToolDeps, "store" | "defaultZone">, userId: string): Promise<string> {
  return effectiveZone(undefined, await deps.store().schedules.timezone(userId), deps.defaultZone);
}

function place(ctx: ToolContext, tool: string): { owner: string; sessionKey: string } | ToolOutput {
  if (!ctx.owner || !ctx.sessionKey) return fail(`${tool} is not available here (no user and conversation to schedule for)`);
  return { owner: ctx.owner, sessionKey: ctx.sessionKey };
}

export function scheduleTools(deps: ScheduleToolDeps): Tool[] {
  const schedule: Tool = {
    spec: SCHEDULE_TOOL,
    idempotent: false,
    run: async (input, ctx) => {
      const where = place(ctx, "schedule");
      if ("content" in where) return where;
      const { schedules } = deps.store();
      const now = deps.now();
      const zone = await userZone(deps, where.owner);
      const checked = checkScheduleInput(input, { now, userZone: zone });
      if (!checked.ok) return fail(checked.error);
      const { spec, firstDue } = checked.value;
      const id = newJobId(deps.ids);
      const traceparent = deps.traceparent?.(where.sessionKey) ?? null;
      const job = { id, ownerId: where.owner, sessionKey: where.sessionKey, ...spec, nextDue: firstDue, createdByTask: ctx.taskId ?? null, traceparent };
      if (!(await schedules.create(job, deps.maxPerUser))) return fail(jobLimitProblem(deps.maxPerUser, deps.maxPerUser)!);
      deps.onScheduled?.();
      const what = spec.schedule.kind === "cron" ? `repeating (cron ${spec.schedule.cron} in ${spec.timezone})` : "once";
      return {
        content: `Scheduled job ${id}, ${what}. Next run: ${runText(firstDue, spec.timezone, now)}. The user can list jobs with /schedules and cancel this one with /unschedule ${id}.`,
      };
    },
  };
  const list: Tool = {
    spec: LIST_SCHEDULES_TOOL,
    idempotent: true,
    run: async (_input, ctx) => {
      const where = place(ctx, "list_schedules");
      if ("content" in where) return where;
      const jobs = await deps.store().schedules.list(where.owner, where.sessionKey);
      return { content: jobsText(jobs.filter((j) => j.status !== "done").map(listed), await userZone(deps, where.owner), deps.now()) };
    },
  };
  const cancel: Tool = {
    spec: CANCEL_SCHEDULE_TOOL,
    idempotent: true,
    run: async (input, ctx) => {
      const where = place(ctx, "cancel_schedule");
      if ("content" in where) return where;
      const id = checkCancelInput(input);
      if (!id.ok) return fail(id.error);
      if (!(await deps.store().schedules.cancel(id.value, where.owner))) {
        return fail(`cancel_schedule: the user has no job ${id.value} (list_schedules shows theirs); nothing was cancelled`);
      }
      return { content: `Cancelled job ${id.value}; it will not run again.` };
    },
  };
  return [schedule, list, cancel];
}
