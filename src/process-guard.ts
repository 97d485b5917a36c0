import type { Logger } from "pino";

export type FailureOrigin = "uncaughtException" | "unhandledRejection";

export interface ProcessGuard {
  /** Failures caught so far, by origin. */
  readonly counts: Readonly<Record<FailureOrigin, number>>;
  /** The service has started: from now on an escaped error is logged and the process keeps serving. */
  serving(): void;
  /** Takes the handlers off again (tests; a second install). */
  uninstall(): void;
}

export interface GuardOptions {
  target?: NodeJS.Process;
  /**
   * Set by an entry point that starts a service: until `serving()`, an escaped error means the start cannot
   * complete, and this is called (it stops the process with a non-zero code) instead of serving on regardless.
   */
  onStartFailure?: (error: unknown) => void;
}

/**
 * The last line of defence of a service: an error no handler caught (a throw in a timer or an event
 * listener, a rejected promise nobody awaited) is logged with its origin and the process keeps serving.
 * Node's default is to exit, which drops every chat's in-flight turn for one bug in one of them. The state
 * such an error leaves behind is unknown, but the durable store is what recovery trusts anyway; every
 * guarded failure is an error-level line to alert on. Before the service has started there is nothing to
 * keep serving: with `onStartFailure`, such an error fails the start.
 */
export function installProcessGuard(log: Logger, options: GuardOptions = {}): ProcessGuard {
  const target = options.target ?? process;
  const counts: Record<FailureOrigin, number> = { uncaughtException: 0, unhandledRejection: 0 };
  let starting = options.onStartFailure !== undefined;
  const report = (origin: FailureOrigin, err: unknown) => {
    counts[origin]++;
    try {
      if (starting) log.error({ err, origin }, `${origin} while starting: switchboard cannot start (a bug: see err for where)`);
      else log.error({ err, origin, count: counts[origin] }, `${origin}: an error escaped every handler (a bug: see err for where); still serving`);
    } catch {
      // A logger that throws here would turn the guard itself into the crash.
      try {
        target.stderr.write(`${origin}: ${String(err)}\n`);
      } catch {
        // Nowhere left to report to.
      }
    }
    if (starting) {
      starting = false;
      options.onStartFailure?.(err);
    }
  };
  // Node passes "unhandledRejection" as the origin when it raises a rejection as an exception (no listener); a
  // rejected top-level await of an ES module entry point arrives that way too.
  const onException = (err: unknown, origin: string) => report(origin === "unhandledRejection" ? "unhandledRejection" : "uncaughtException", err);
  const onRejection = (reason: unknown) => report("unhandledRejection", reason);
  target.on("uncaughtException", onException);
  target.on("unhandledRejection", onRejection);
  return {
    counts,
    serving() {
      starting = false;
    },
    uninstall() {
      target.off("uncaughtException", onException);
      target.off("unhandledRejection", onRejection);
    },
  };
}
