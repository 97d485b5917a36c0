import type { Logger } from "pino";
import { systemTimers, type Timers } from "../runtime/deps.js";

/** Why a chat platform could not be started. */
export interface StartProblem {
  /** `unreachable`: no answer (network, DNS, a black hole); `refused`: it answered and rejected the credentials. */
  kind: "unreachable" | "refused" | "failed";
  /** What follows the platform's name in a sentence for the admin: "refused the bot token (…): check …". */
  text: string;
}

/** A chat provider as the service runs it: started until it connects, stopped when the service stops. */
export interface PlatformProvider {
  /** Connects and registers with the gateway; gives up (rejecting) when `signal` aborts. Called again after a failure. */
  start(signal: AbortSignal): Promise<void>;
  /** Undoes whatever a start did, also a start that failed halfway. */
  stop(): Promise<void>;
  /** What a failed start means: the platform could not be reached, refused the credentials, or something else. */
  problem(error: unknown): StartProblem;
  /** Who the bot is on the platform once connected, e.g. "@switchboard_bot, long polling". */
  identity(): string;
}

export type ConnectionState =
  | { status: "connecting"; attempt: number }
  | { status: "connected"; identity: string }
  | { status: "retrying"; problem: StartProblem; attempt: number; retryInMs: number }
  | { status: "stopped" };

export interface ConnectionOptions {
  log: Logger;
  /** For the attempt deadline and the backoff; tests fire them by hand. */
  timers?: Timers;
  /** How long one attempt may take before it counts as unreachable (a black-holed connection never fails by itself). */
  attemptTimeoutMs?: number;
  /** The first wait after a failure; it doubles after each one, up to `maxBackoffMs`. */
  backoffMs?: number;
  maxBackoffMs?: number;
  /** Every change of state (the terminal chat says when a platform comes up after failing). */
  onChange?: (state: ConnectionState) => void;
}

export const ATTEMPT_TIMEOUT_MS = 30_000;
export const FIRST_BACKOFF_MS = 1_000;
export const MAX_BACKOFF_MS = 60_000;

/**
 * One chat platform's connection, in the background: nothing else waits for it. An attempt that fails (or gets no
 * answer within the deadline) is undone and tried again with backoff, for as long as the service runs; what failed
 * is logged in one line, once per distinct problem, and is what GET /readyz and the banner report meanwhile.
 */
export class PlatformConnection {
  private current: ConnectionState = { status: "connecting", attempt: 0 };
  private attempts = 0;
  private retry: unknown = null;
  private running: AbortController | null = null;
  private lastProblem: string | null = null;
  private stopped = false;
  private readonly timers: Timers;

  constructor(
    /** As people read it: "Telegram", "Slack". */
    readonly name: string,
    private readonly provider: PlatformProvider,
    private readonly options: ConnectionOptions,
  ) {
    this.timers = options.timers ?? systemTimers;
  }

  get state(): ConnectionState {
    return this.current;
  }

  /** Starts connecting and returns at once. */
  start(): void {
    void this.attempt();
  }

  /** null when connected; else what GET /readyz says about this platform. */
  readiness(): string | null {
    return this.current.status === "connected" ? null : `${this.name} ${this.status()}`;
  }

  /** What follows the platform's name in the banner: "connected as @bot", "is unreachable at …; trying again in 4 s". */
  status(): string {
    switch (this.current.status) {
      case "connected":
        return `connected as ${this.current.identity}`;
      case "connecting":
        return this.lastProblem ? `${this.lastProblem}; trying again now` : "connecting…";
      case "retrying":
        return `${this.current.problem.text}; trying again in ${seconds(this.current.retryInMs)}`;
      case "stopped":
        return "stopped";
    }
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    if (this.retry !== null) this.timers.clearTimeout(this.retry);
    this.retry = null;
    this.running?.abort(new Error("the service is stopping"));
    const wasUp = this.current.status === "connected" || this.running !== null;
    this.set({ status: "stopped" });
    if (wasUp) await this.provider.stop();
  }

  private async attempt(): Promise<void> {
    this.retry = null;
    if (this.stopped) return;
    const attempt = ++this.attempts;
    const controller = new AbortController();
    this.running = controller;
    this.set({ status: "connecting", attempt });
    const timeoutMs = this.options.attemptTimeoutMs ?? ATTEMPT_TIMEOUT_MS;
    const deadline = this.timers.setTimeout(() => controller.abort(new NoAnswer(timeoutMs)), timeoutMs);
    try {
      await untilAborted(this.provider.start(controller.signal), controller.signal);
      if (this.stopped) return;
      const identity = this.provider.identity();
      if (this.lastProblem) this.options.log.info({ platform: this.name, attempt }, `${this.name} connected as ${identity} after ${attempt} attempts`);
      else this.options.log.info({ platform: this.name }, `${this.name} connected as ${identity}`);
      this.lastProblem = null;
      this.set({ status: "connected", identity });
    } catch (error) {
      if (this.stopped) return;
      const problem =
        controller.signal.reason instanceof NoAnswer
          ? { kind: "unreachable" as const, text: `is unreachable: no answer within ${seconds(timeoutMs)}` }
          : this.provider.problem(error);
      // Whatever the attempt got done is undone, so the next one starts from scratch.
      await this.provider.stop().catch((stopError: unknown) => this.options.log.debug({ err: stopError, platform: this.name }, "undoing a failed start failed"));
      if (this.stopped) return;
      const retryInMs = Math.min((this.options.backoffMs ?? FIRST_BACKOFF_MS) * 2 ** (attempt - 1), this.options.maxBackoffMs ?? MAX_BACKOFF_MS);
      this.report(problem, error, attempt, retryInMs);
      this.set({ status: "retrying", problem, attempt, retryInMs });
      this.retry = this.timers.setTimeout(() => void this.attempt(), retryInMs);
    } finally {
      this.timers.clearTimeout(deadline);
      if (this.running === controller) this.running = null;
    }
  }

  /** One line per distinct problem; the same one again, at every retry, only at debug level. */
  private report(problem: StartProblem, error: unknown, attempt: number, retryInMs: number): void {
    const line = `${this.name} ${problem.text}; trying again in ${seconds(retryInMs)}, then less and less often`;
    const fields = { platform: this.name, kind: problem.kind, attempt, retryInMs };
    // The line says what matters; the raw error (a URL, a stack) is for debugging.
    this.options.log.debug({ ...fields, err: error }, `${this.name}: start attempt ${attempt} failed`);
    if (problem.text === this.lastProblem) this.options.log.debug(fields, line);
    else this.options.log[problem.kind === "unreachable" ? "warn" : "error"](fields, line);
    this.lastProblem = problem.text;
  }

  private set(state: ConnectionState): void {
    this.current = state;
    this.options.onChange?.(state);
  }
}

/** The deadline of an attempt passed. */
class NoAnswer extends Error {
  constructor(readonly ms: number) {
    super(`no answer within ${seconds(ms)}`);
  }
}

/** Settles with `work`, or rejects as soon as `signal` aborts (a start stuck on a silent network is left behind). */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(error);
      },
    );
  });
}

function seconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${(ms / 1000).toFixed(1)} s`;
}
