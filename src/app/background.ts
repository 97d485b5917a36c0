// A replica's background work: memory extraction, scheduled runs, the approval sweeper, file retention and the poll
// for work nobody is doing. createApp starts each at its place in the start-up and stops them before the gateway.
import type { Logger } from "pino";
import type { Config } from "../config.js";
import { FileRetention } from "../files/retention.js";
import type { Gateway } from "../gateway/gateway.js";
import { MemoryWorker } from "../gateway/memory-worker.js";
import { Scheduler } from "../gateway/scheduler.js";
import type { Model } from "../llm/model.js";
import { budgetOf } from "../runtime/budget.js";
import { backgroundTimers, systemTimers, type Ids } from "../runtime/deps.js";
import { extractMemories, retryable } from "../runtime/memory/extract.js";
import type { RuntimeDeps } from "../runtime/orchestrator.js";
import { repeat } from "../runtime/repeat.js";
import { resolveModel } from "../runtime/tools/spawn.js";
import { allowlistAdmission } from "../schedules/admission.js";
import type { Store } from "../store/store.js";
import { retentionMetrics } from "../telemetry/files.js";
import type { Metrics } from "../telemetry/metrics.js";
import { scheduleMetrics } from "../telemetry/schedules.js";

export interface BackgroundParts {
  store: Store;
  gateway: Gateway;
  /** This process's name among the replicas (the sweeper's lease holder). */
  replica: string;
  ids: Ids;
  log: Logger;
  metrics: Metrics;
}

/** How often a replica looks for work nobody is doing (a replica that died, a notification it missed). */
export function pollInterval(leaseMs: number): number {
  return Math.max(250, Math.min(5_000, Math.floor(leaseMs / 2)));
}

/** Memory extraction in the background (MEMORY=on, with a model); the gateway starts and stops it. */
export function memoryWorker(
  config: Config,
  {
    store,
    replica,
    ids,
    log,
    model,
    extractionModel,
    runtime,
  }: Omit<BackgroundParts, "gateway" | "metrics"> & { model: Model; extractionModel: Model; runtime: RuntimeDeps },
): MemoryWorker | undefined {
  return config.MEMORY && model.configured
    ? new MemoryWorker({
        store,
        holder: replica,
        extract: (job) =>
          extractMemories(
            {
              store,
              model: extractionModel,
              modelName: resolveModel(config.MEMORY_MODEL, config.ANTHROPIC_MODEL),
              ids,
              log,
              budget: budgetOf(runtime.settings),
              ...(runtime.quotas ? { quotas: runtime.quotas } : {}),
            },
            job,
          ),
        retryable,
        log: log.child({ part: "memory" }),
        timers: systemTimers,
        now: Date.now,
      })
    : undefined;
}

/** Scheduled jobs (SCHEDULES=on), not started; null when off. */
export function createScheduler(config: Config, { store, gateway, ids, log, metrics }: Omit<BackgroundParts, "replica">): Scheduler | null {
  // Scheduled jobs: every replica looks for due runs; a run's request id makes two of them submit it once.
  return config.SCHEDULES
    ? new Scheduler({
        store,
        submit: (message) => gateway.submit(message),
        ids,
        now: Date.now,
        timers: backgroundTimers,
        log: log.child({ part: "scheduler" }),
        graceMs: config.SCHEDULE_GRACE,
        defaultZone: config.DEFAULT_TIMEZONE,
        observer: scheduleMetrics(metrics),
        admits: allowlistAdmission({
          telegramUsers: config.TELEGRAM_ALLOWED_USERS,
          slackUsers: config.SLACK_ALLOWED_USERS,
          slackChannels: config.SLACK_ALLOWED_CHANNELS,
        }),
      })
    : null;
}

/**
 * Starts the approval sweeper (after one sweep), file retention and the poll for orphaned work. `stop` ends them;
 * `release` lets the sweeper's lease go once nothing can sweep any more.
 */
export async function startLoops(
  config: Config,
  { store, gateway, replica, log, metrics }: Omit<BackgroundParts, "ids">,
): Promise<{ stop(): Promise<void>; release(): Promise<void> }> {
  // Approvals nobody answers expire into a denial (APPROVAL_TIMEOUT): checked now and every 30 s, by one replica
  // at a time (whichever holds the sweeper's lease).
  const sweepApprovals = async () => {
    if (await store.leases.acquire("@approval-sweeper", replica, 90_000)) await gateway.expireApprovals(Date.now());
  };
  // FILE_RETENTION_DAYS: file bytes past the retention are deleted now and every hour (src/files/retention.ts).
  const retention = new FileRetention({
    store,
    days: config.FILE_RETENTION_DAYS,
    now: Date.now,
    timers: backgroundTimers,
    log: log.child({ part: "files" }),
    observer: retentionMetrics(metrics),
  });
  retention.start();
  const failedSweep = (error: unknown) => log.error({ err: error }, "could not expire approvals; trying again in 30 s");
  await sweepApprovals().catch(failedSweep);
  const stopSweep = repeat(backgroundTimers, 30_000, () => void sweepApprovals().catch(failedSweep));
  // Work nobody is doing (a replica died, a notification was missed) is taken over.
  const stopPoll = repeat(
    backgroundTimers,
    pollInterval(config.SESSION_LEASE_MS),
    () => void gateway.poll().catch((error: unknown) => log.warn({ err: error }, "could not look for orphaned work")),
  );
  return {
    async stop() {
      stopSweep();
      stopPoll();
      await retention.stop();
    },
    async release() {
      await store.leases.release("@approval-sweeper", replica, (await store.leases.get("@approval-sweeper").catch(() => null))?.token ?? -1).catch(() => {});
    },
  };
}
