import { constants } from "node:os";
import type { Logger } from "pino";
import { reachesStderr, type LogPlan } from "./log.js";

export const FORCED_STOP = "forced stop: in-flight turns resume at the next start";

export interface ShutdownOptions {
  log: Logger;
  plan: LogPlan;
  /** Runs first, before anything is said: the terminal chat stops drawing on the line the notice goes to. */
  quiet?: () => void;
  /** The graceful part: stop the providers, finish or checkpoint in-flight turns, close the store. */
  stop: () => Promise<void>;
  /** Where the lines for a person at the terminal go (default stderr). */
  tell?: (line: string) => void;
  exit?: (code: number) => void;
  signals?: Pick<NodeJS.Process, "on">;
}

/**
 * SIGINT/SIGTERM stop the process gracefully; another one while that runs exits at once, with 128 + the signal's
 * number (130 for Ctrl-C). Forcing is safe: every committed step is durable, and a turn cut short resumes from its
 * last one at the next start. Returns the shutdown for other reasons (a failed start: `code` 1).
 */
export function handleStopSignals(options: ShutdownOptions): (reason: string, code?: number) => Promise<void> {
  const { log, plan } = options;
  const tell = options.tell ?? ((line: string) => void process.stderr.write(`${line}\n`));
  const exit = options.exit ?? ((code: number) => process.exit(code));
  // With the terminal chat, the logs go to a file: the person at the terminal is told directly.
  const terminal = plan.to === "file";
  let stopping = false;

  async function shutdown(reason: string, code = 0): Promise<void> {
    if (stopping) return;
    stopping = true;
    options.quiet?.();
    if (reason === "SIGINT" || reason === "SIGTERM") {
      log.info({ signal: reason }, "shutting down: finishing or checkpointing in-flight turns (press Ctrl-C again to force)");
      if (terminal) tell("Stopping… (press Ctrl-C again to force)");
    }
    try {
      await options.stop();
    } catch (error) {
      log.error({ err: error }, "the graceful stop failed; exiting anyway");
    }
    exit(code);
  }

  const onSignal = (signal: NodeJS.Signals) => {
    if (!stopping) return void shutdown(signal);
    log.warn(FORCED_STOP);
    if (terminal && !reachesStderr(plan, "warn")) tell(FORCED_STOP);
    exit(128 + constants.signals[signal]);
  };
  const signals = options.signals ?? process;
  signals.on("SIGINT", () => onSignal("SIGINT"));
  signals.on("SIGTERM", () => onSignal("SIGTERM"));
  return shutdown;
}
