import { deferred } from "../../helpers/deferred.js";

/** Where a replica can be frozen mid-step: an answered model call it has not handled yet, or a side effect just done. */
export type PausePoint = "model" | "ledger";

type Kind = "store" | PausePoint;

interface Held {
  kind: Kind;
  release: () => void;
}

/**
 * A replica's process state as the simulation sees it. Paused (a GC pause, a frozen VM): every store call,
 * model answer and tool of that replica waits at the gate until it resumes. Dead (a crash): they wait forever.
 * A pause can be armed to strike at the n-th next model answer or side effect, so it lands mid-step.
 */
export class PauseGate {
  state: "running" | "paused" | "dead" = "running";
  private armed: { point: PausePoint; countdown: number; action: "pause" | "die" } | null = null;
  private held: Held[] = [];
  private stop = deferred<void>();

  constructor(
    private readonly onPause: (point: PausePoint | "now") => void,
    private readonly onDeath: (point: PausePoint | "now") => void,
  ) {}

  /** At the `nth` next `point`, the replica freezes (`pause`) or dies there (`die`, a crash). */
  arm(point: PausePoint, nth: number, then: "pause" | "die" = "pause"): void {
    this.armed = { point, countdown: nth, action: then };
  }

  disarm(): void {
    this.armed = null;
  }

  get isArmed(): boolean {
    return this.armed !== null;
  }

  /** Resolves when the replica next stops running (paused or dead), so a caller need not wait on it. */
  get stopped(): Promise<void> {
    return this.stop.promise;
  }

  pause(point: PausePoint | "now" = "now"): void {
    if (this.state !== "running") return;
    this.armed = null;
    this.state = "paused";
    this.stop.resolve();
    this.onPause(point);
  }

  kill(point: PausePoint | "now" = "now"): void {
    if (this.state === "dead") return;
    this.armed = null;
    this.state = "dead";
    this.held = []; // never released
    this.stop.resolve();
    this.onDeath(point);
  }

  /**
   * Null when the caller may go on at once (no extra turn of the event loop, so a running replica behaves as
   * it would without the gate); otherwise a promise that resolves when it may.
   */
  wait(kind: Kind): Promise<void> | null {
    const armed = this.armed;
    if (this.state === "running" && armed && armed.point === kind && --armed.countdown === 0) {
      if (armed.action === "die") this.kill(kind);
      else this.pause(kind);
    }
    if (this.state === "running") return null;
    return new Promise((release) => {
      if (this.state === "paused") this.held.push({ kind, release });
    });
  }

  /** Lets the held store calls go (the process runs again), keeping held model answers and tool results back. */
  resumeStore(): void {
    this.state = "running";
    this.stop = deferred<void>();
    const store = this.held.filter((h) => h.kind === "store");
    this.held = this.held.filter((h) => h.kind !== "store");
    for (const h of store) h.release();
  }

  /** Everything held goes on, oldest first. */
  resume(): void {
    if (this.state !== "running") this.stop = deferred<void>();
    this.state = "running";
    const held = this.held;
    this.held = [];
    for (const h of held) h.release();
  }
}
