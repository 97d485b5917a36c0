/** Timeouts, injectable so tests draw frames by hand. */
export interface SpinnerTimers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

const systemTimers: SpinnerTimers = {
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

const FRAMES = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
export const SPINNER_INTERVAL_MS = 80;

/**
 * "⠋ thinking…" on the current terminal line while turns run. The line is the spinner's only while it is drawn:
 * whoever writes there next calls `erased()` (after clearing it) or `clear()` first. `canDraw` says whether the
 * line is free (no reply being written, nothing typed at the prompt).
 */
export class Spinner {
  private running = 0;
  private frame = 0;
  private timer: unknown = null;
  private drawn = false;

  constructor(
    private readonly write: (text: string) => void,
    private readonly canDraw: () => boolean,
    private readonly timers: SpinnerTimers = systemTimers,
  ) {}

  /** A turn started: the spinner shows at once and redraws until every started turn has ended. */
  start(): void {
    this.running++;
    if (this.timer === null) this.tick();
  }

  /** A turn ended; true when the spinner was on screen and is now gone (the caller redraws its prompt). */
  end(): boolean {
    this.running = Math.max(0, this.running - 1);
    if (this.running > 0) return false;
    this.stopTimer();
    return this.clear();
  }

  /** Stops for good (the chat closes). */
  stop(): void {
    this.running = 0;
    this.stopTimer();
    this.clear();
  }

  /** Takes the spinner off the line; true if it was there. */
  clear(): boolean {
    if (!this.drawn) return false;
    this.write("\r\x1b[K");
    this.drawn = false;
    return true;
  }

  /** Someone else cleared the line. */
  erased(): void {
    this.drawn = false;
  }

  private tick(): void {
    this.timer = null;
    if (this.running === 0) return;
    if (this.canDraw()) {
      this.write(`\r\x1b[K${FRAMES[this.frame % FRAMES.length]} thinking…`);
      this.frame++;
      this.drawn = true;
    }
    this.timer = this.timers.setTimeout(() => this.tick(), SPINNER_INTERVAL_MS);
  }

  private stopTimer(): void {
    if (this.timer !== null) this.timers.clearTimeout(this.timer);
    this.timer = null;
  }
}
