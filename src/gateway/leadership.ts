import type { Logger } from "pino";
import { backgroundTimers, type Timers } from "../runtime/deps.js";
import type { Store } from "../store/store.js";

export interface LeadershipOptions {
  /** The singleton job's lease key, e.g. `@telegram-polling`. */
  key: string;
  replica: string;
  ttlMs: number;
  log: Logger;
  /** This replica became the one that runs the job. */
  onGain(): Promise<void> | void;
  /** It no longer is (its lease was taken over, or it is stopping). */
  onLose(): Promise<void> | void;
  /** Default: the process's background timers. */
  timers?: Timers;
}

/**
 * A job that runs on exactly one replica at a time (Telegram long polling): a lease renewed every third of its
 * lifetime. When the replica running it dies, its lease runs out and another replica takes the job over.
 */
export class Leadership {
  private token: number | null = null;
  private timer: unknown = null;
  private stopped = false;
  private turn: Promise<void> = Promise.resolve();

  constructor(
    private readonly store: Pick<Store, "leases">,
    private readonly options: LeadershipOptions,
  ) {}

  private get timers(): Timers {
    return this.options.timers ?? backgroundTimers;
  }

  get leading(): boolean {
    return this.token !== null;
  }

  /** Tries at once (resolves after the first attempt), then keeps trying or renewing in the background. */
  async start(): Promise<void> {
    await this.tick();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== null) this.timers.clearTimeout(this.timer);
    await this.turn;
    if (this.token === null) return;
    const token = this.token;
    this.token = null;
    await this.options.onLose();
    await this.store.leases.release(this.options.key, this.options.replica, token).catch(() => {});
  }

  private tick(): Promise<void> {
    this.turn = this.turn
      .then(() => this.step())
      .catch((error: unknown) => this.options.log.warn({ err: error, job: this.options.key }, "could not check the job's lease"));
    return this.turn.finally(() => this.schedule());
  }

  private async step(): Promise<void> {
    if (this.stopped) return;
    const { key, replica, ttlMs, log } = this.options;
    if (this.token !== null) {
      if (await this.store.leases.renew(key, replica, this.token, ttlMs)) return;
      this.token = null;
      log.warn({ job: key }, "another replica took this job over");
      await this.options.onLose();
      return;
    }
    const lease = await this.store.leases.acquire(key, replica, ttlMs);
    if (!lease) return;
    this.token = lease.token;
    log.info({ job: key }, "this replica runs the job now");
    await this.options.onGain();
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = this.timers.setTimeout(() => void this.tick(), Math.max(100, Math.floor(this.options.ttlMs / 3)));
  }
}
