import type { Logger } from "pino";

export type FailureOrigin = "uncaughtException" | "unhandledRejection";

export interface ProcessGuard {
  /** Failures caught so far, by origin. */
  readonly counts: Readonly<Record<FailureOrigin, number>>;
  /** Takes the handlers off again (tests; a second install). */
  uninstall(): void;
}

/**
 * The last line of defence of a service: an error no handler caught (a throw in a timer or an event
 * listener, a rejected promise nobody awaited) is logged with its origin and the process keeps serving.
 * Node's default is to exit, which drops every chat's in-flight turn for one bug in one of them. The state
 * such an error leaves behind is unknown, but the durable store is what recovery trusts anyway; every
 * guarded failure is an error-level line to alert on.
 */
export function installProcessGuard(log: Logger, target: NodeJS.Process = process): ProcessGuard {
  const counts: Record<FailureOrigin, number> = { uncaughtException: 0, unhandledRejection: 0 };
  const report = (origin: FailureOrigin, err: unknown) => {
    counts[origin]++;
    try {
      log.error({ err, origin, count: counts[origin] }, `${origin}: an error escaped every handler (a bug: see err for where); still serving`);
    } catch {
      // A logger that throws here would turn the guard itself into the crash.
      try {
        target.stderr.write(`${origin}: ${String(err)}\n`);
      } catch {
        // Nowhere left to report to.
      }
    }
  };
  // Node passes "unhandledRejection" as the origin when it raises a rejection as an exception (no listener).
  const onException = (err: unknown, origin: string) => report(origin === "unhandledRejection" ? "unhandledRejection" : "uncaughtException", err);
  const onRejection = (reason: unknown) => report("unhandledRejection", reason);
  target.on("uncaughtException", onException);
  target.on("unhandledRejection", onRejection);
  return {
    counts,
    uninstall() {
      target.off("uncaughtException", onException);
      target.off("unhandledRejection", onRejection);
    },
  };
}
