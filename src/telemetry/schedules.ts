// Scheduled jobs' runs as a Prometheus counter: runs, runs missed while the gateway was down (folded into one
// run), and runs skipped as more than SCHEDULE_GRACE late.
import { Counter } from "prom-client";
import type { SchedulerObserver } from "../gateway/scheduler.js";
import type { Metrics } from "./metrics.js";

export function scheduleMetrics(metrics: Metrics): SchedulerObserver {
  const runs = new Counter({
    name: "switchboard_scheduled_runs_total",
    help: "Due times of scheduled jobs by outcome: run (submitted as a request), missed (folded into one run after downtime), skipped (more than SCHEDULE_GRACE late).",
    labelNames: ["outcome"],
    registers: [metrics.registry],
  });
  for (const outcome of ["run", "missed", "skipped"]) runs.inc({ outcome }, 0);
  return {
    run: () => runs.inc({ outcome: "run" }),
    missed: (count) => runs.inc({ outcome: "missed" }, count),
    skipped: (count) => runs.inc({ outcome: "skipped" }, count),
  };
}
