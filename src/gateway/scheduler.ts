// The scheduler: submits each due run of a scheduled job as a request through the inbox, like a message from the
// job's owner in the conversation where it was scheduled. Every replica runs one. A run's request has a
// deterministic external id (job + due time), so two replicas, or a process that died between submitting and
// moving the job on, make one request; moving the job on is a compare-and-set, so one replica tells the owner
// about skipped runs. The run itself is then a request like any other: a replica that dies running it has its
// session taken over after the lease, and the reply goes out once through the outbox.
import type { Logger } from "pino";
import type { Ids, Timers } from "../runtime/deps.js";
import type { AdvanceNotice, ScheduleJobRecord, Store } from "../store/store.js";
import type { RunAdmission } from "../schedules/admission.js";
import { planDue, type DuePlan } from "../schedules/due.js";
import { skippedText } from "../schedules/describe.js";
import { parseRunExternalId, runExternalId } from "../schedules/run-id.js";
import { effectiveZone, isoInZone } from "../schedules/zone.js";
import { listed } from "../runtime/tools/schedules.js";
import type { InboundMessage, SubmitResult } from "./types.js";

/** Metrics of the scheduler (src/telemetry); absent: nothing counts. */
export interface SchedulerObserver {
  /** A due time ran (its request was stored). */
  run(): void;
  /** Due times folded into one run because the gateway was down (a missed run runs once). */
  missed(count: number): void;
  /** Due times skipped as more than SCHEDULE_GRACE late. */
  skipped(count: number): void;
}

export interface SchedulerDeps {
  store: Pick<Store, "schedules" | "requests">;
  submit(message: InboundMessage): Promise<SubmitResult>;
  /** Ids of the notices telling an owner about skipped runs (queued to the outbox with the job's move). */
  ids: Ids;
  now: () => number;
  timers: Timers;
  log: Logger;
  /** SCHEDULE_GRACE. */
  graceMs: number;
  defaultZone?: string | undefined;
  observer?: SchedulerObserver;
  /**
   * The allowlists, checked again when a job is due (its owner or chat may have been taken off since it was
   * scheduled): a job refused is paused, with the reason, and logged once. Absent: every job may run.
   */
  admits?: RunAdmission;
  /** The longest sleep between looks (jobs added by other replicas are seen within it). Default 30 s. */
  pollMs?: number;
  /** How soon a job still due after a look (its conversation was busy) is tried again. Default 5 s. */
  retryMs?: number;
  /** Jobs handled per look; more wait for the next one. Default 100. */
  batch?: number;
}

/** A marker the model reads before the instruction: this turn is a scheduled run, not a live message. */
export function scheduledRunText(job: Pick<ScheduleJobRecord, "id" | "instruction" | "timezone">, due: number): string {
  return (
    `[Scheduled run of job ${job.id}, due ${isoInZone(due, job.timezone)} (${job.timezone}). This is not a live message: ` +
    `the user scheduled this earlier and may not be reading now. Carry out the instruction and write your reply to them.]\n\n${job.instruction}`
  );
}

export class Scheduler {
  private handle: unknown = null;
  /** Not started, or stopped: no timer is set. */
  private stopped = true;
  /** Stopped: a look in progress ends after its current job. */
  private closed = false;
  private looking: Promise<void> | null = null;
  private again = false;

  constructor(private readonly deps: SchedulerDeps) {}

  /** Looks at once (runs missed while the gateway was down are run or skipped now, per the grace rule), then on time. */
  start(): void {
    this.stopped = false;
    this.wake();
  }

  /** A job was added or changed here: look again now. */
  wake(): void {
    if (this.stopped) return;
    if (this.looking) {
      this.again = true;
      return;
    }
    this.deps.timers.clearTimeout(this.handle);
    this.looking = this.look()
      .catch((error: unknown) => this.deps.log.error({ err: error }, "could not run the scheduled jobs; trying again"))
      .then(() => this.sleep())
      .finally(() => {
        this.looking = null;
        if (this.again) {
          this.again = false;
          this.wake();
        }
      });
  }

  /** Resolves when the current look (if any) is over. */
  async idle(): Promise<void> {
    while (this.looking) await this.looking;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.closed = true;
    this.deps.timers.clearTimeout(this.handle);
    await this.idle();
  }

  private async sleep(): Promise<void> {
    if (this.stopped) return;
    const poll = this.deps.pollMs ?? 30_000;
    const next = await this.deps.store.schedules.nextDue().catch(() => null);
    const wait = next === null ? poll : next - this.deps.now();
    // A job still due after a look waits its turn (a busy conversation): look again in a while, not at once.
    const delay = Math.min(poll, wait > 0 ? wait : (this.deps.retryMs ?? 5000));
    this.handle = this.deps.timers.setTimeout(() => this.wake(), delay);
  }

  /** Handles every job due now. */
  async look(): Promise<void> {
    const now = this.deps.now();
    const due = await this.deps.store.schedules.due(now, this.deps.batch ?? 100);
    for (const job of due) {
      if (this.closed) return;
      try {
        await this.handle1(job, now);
      } catch (error) {
        this.deps.log.error({ err: error, job: job.id }, "could not run a scheduled job; trying again at the next look");
      }
    }
  }

  private async handle1(job: ScheduleJobRecord, now: number): Promise<void> {
    const plan = planDue(job, now, this.deps.graceMs);
    if (job.nextDue === null || (plan.run === null && plan.late === null)) return;
    const log = this.deps.log.child({ job: job.id, session: job.sessionKey });
    const refused = this.deps.admits?.(job) ?? null;
    if (refused !== null) {
      // Neither a run nor a skip notice for someone no longer allowed; paused (not moved on) so it is seen in the lists.
      if (await this.deps.store.schedules.pause(job.id, refused)) log.warn({ reason: refused }, "scheduled job paused: no longer allowed");
      return;
    }
    if (plan.late) {
      // A process that submitted a run and died before moving the job on, then stayed down past the grace: the run's
      // request is stored (and runs at recovery), so its due time is not skipped. The move it died before is made.
      const submitted = await this.submittedEarlier(job, plan.late.last);
      if (submitted !== null) return this.finishMove(job, submitted, now);
    }
    if (plan.run !== null) {
      const submitted = await this.deps.submit({
        sessionKey: job.sessionKey,
        messageId: runExternalId(job.id, plan.run),
        userId: job.ownerId,
        text: scheduledRunText(job, plan.run),
        addressed: true,
      });
      if (submitted.status === "refused" || submitted.status === "limited") {
        // Someone else's task runs in that conversation, or the owner is over their message allowance: the run
        // waits its turn and is tried again at the next look (within the grace).
        log.info({ status: submitted.status }, "scheduled run waits: the conversation is busy");
        return;
      }
      if (submitted.status === "forbidden" || submitted.status === "ignored") {
        if (await this.deps.store.schedules.pause(job.id, "its conversation no longer accepts its owner's messages")) {
          log.warn({ status: submitted.status }, "scheduled job paused: its run was not accepted");
        }
        return;
      }
    }
    const lastDue = plan.run ?? plan.late!.last;
    const result = plan.run !== null ? "run" : `skipped: ${plan.late!.count}${plan.late!.more ? "+" : ""} late`;
    // The owner is told about skipped runs by a notice committed with the move: never lost, never told twice.
    const notice = plan.late ? await this.skipNotice(job, plan, now) : undefined;
    if (!(await this.deps.store.schedules.advance(job.id, job.nextDue, plan.next, lastDue, result, notice))) return; // another replica moved it on
    if (plan.run !== null) {
      this.deps.observer?.run();
      log.info({ due: new Date(plan.run).toISOString(), request: runExternalId(job.id, plan.run) }, "scheduled run submitted");
    }
    if (plan.folded) this.deps.observer?.missed(plan.folded.count);
    if (plan.late) {
      this.deps.observer?.skipped(plan.late.count);
      log.info({ skipped: plan.late.count }, "scheduled runs skipped: more than SCHEDULE_GRACE late");
    }
  }

  /** The latest due time from the job's next one up to `last` whose run's request is already stored, or null. */
  private async submittedEarlier(job: ScheduleJobRecord, last: number): Promise<number | null> {
    let latest: number | null = null;
    for (const request of await this.deps.store.requests.ofSession(job.sessionKey)) {
      const run = parseRunExternalId(request.externalId);
      if (run?.jobId === job.id && run.due >= job.nextDue! && run.due <= last && (latest === null || run.due > latest)) latest = run.due;
    }
    return latest;
  }

  /** The move planned when `due` was submitted, as of its due time; then what is due since is handled as usual. */
  private async finishMove(job: ScheduleJobRecord, due: number, now: number): Promise<void> {
    const plan = planDue(job, due, this.deps.graceMs);
    const notice = plan.late ? await this.skipNotice(job, plan, now) : undefined;
    if (!(await this.deps.store.schedules.advance(job.id, job.nextDue!, plan.next, due, "run", notice))) return;
    this.deps.log.info({ job: job.id, due: new Date(due).toISOString() }, "scheduled run found submitted before a restart; its job moved on");
    const moved = await this.deps.store.schedules.get(job.id);
    if (moved?.status === "active") await this.handle1(moved, now);
  }

  private async skipNotice(job: ScheduleJobRecord, plan: DuePlan, now: number): Promise<AdvanceNotice> {
    const zone = effectiveZone(undefined, await this.deps.store.schedules.timezone(job.ownerId), this.deps.defaultZone);
    const text = skippedText(listed({ ...job, nextDue: plan.next }), plan.late!, this.deps.graceMs, zone, now);
    const message = { id: this.deps.ids.next("out"), requestId: null, taskId: null, agent: "switchboard", depth: 0, text, kind: "notice" as const };
    return { sessionKey: job.sessionKey, message };
  }
}

/**
 * A reply of a scheduled run was refused for good (bot blocked, chat or thread gone): its job is paused, so it does
 * not keep starting tasks nobody can read; logged once, by the caller that paused it. Other requests: nothing.
 */
export async function pauseUndeliverable(store: Pick<Store, "schedules" | "requests">, log: Logger, requestId: string, reason: string): Promise<void> {
  const request = await store.requests.get(requestId);
  const run = request?.externalId ? parseRunExternalId(request.externalId) : null;
  if (!run) return;
  if (await store.schedules.pause(run.jobId, `its reply could not be delivered (${reason})`)) {
    log.warn({ job: run.jobId, session: request!.sessionKey, reason }, "scheduled job paused: its reply cannot be delivered");
  }
}
