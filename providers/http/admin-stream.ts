import type { ServerResponse } from "node:http";
import type { Logger } from "pino";
import type { Timers } from "../../src/runtime/deps.js";
import type { AdminReads, Snapshot } from "../../src/gateway/index.js";

export interface SnapshotStreamOptions {
  reads: Pick<AdminReads, "watch">;
  /** Reads the store into what the page shows. */
  snapshot: () => Promise<Snapshot>;
  timers: Timers;
  log: Logger;
  /** A comment line this often keeps proxies from closing an idle stream. */
  keepaliveMs: number;
  /** At most one refresh per this many ms; changes within it are read together, after it. */
  coalesceMs: number;
}

/**
 * GET /admin/api/events: a `snapshot` event at once, and a fresh one after the store reports changes. A burst of
 * changes (a turn commits several steps) becomes one refresh, read when the coalescing window ends; changes that
 * come in while a snapshot is being read start the next window. Reply previews (deltas) change nothing stored and
 * are ignored. The subscription ends with the connection.
 */
export function streamSnapshots(res: ServerResponse, options: SnapshotStreamOptions): void {
  const { timers } = options;
  res.writeHead(200, {
    "content-type": "text/event-stream; charset=utf-8",
    "cache-control": "no-store",
    connection: "keep-alive",
    "x-accel-buffering": "no",
    "x-content-type-options": "nosniff",
  });
  res.flushHeaders();
  let closed = false;
  let reading = false;
  let changedMeanwhile = false;
  let refresh: unknown = null;

  const send = (event: string, data: unknown) => {
    if (!closed) res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  };
  const read = async () => {
    reading = true;
    changedMeanwhile = false;
    try {
      send("snapshot", await options.snapshot());
    } catch (error) {
      options.log.warn({ err: error }, "the admin view could not read the store");
      send("problem", { message: "the store could not be read; the next change tries again" });
    } finally {
      reading = false;
    }
    if (changedMeanwhile) schedule();
  };
  const schedule = () => {
    if (closed || refresh !== null) return;
    refresh = timers.setTimeout(() => {
      refresh = null;
      if (reading) changedMeanwhile = true;
      else void read();
    }, options.coalesceMs);
  };

  const unsubscribe = options.reads.watch((change) => {
    if (change.kind === "delta") return;
    if (reading) changedMeanwhile = true;
    else schedule();
  });
  let keepalive = timers.setTimeout(function beat() {
    if (closed) return;
    res.write(": keepalive\n\n");
    keepalive = timers.setTimeout(beat, options.keepaliveMs);
  }, options.keepaliveMs);
  res.on("close", () => {
    closed = true;
    unsubscribe();
    timers.clearTimeout(keepalive);
    if (refresh !== null) timers.clearTimeout(refresh);
  });
  // Subscribed first, so a change made while this first snapshot is read is not missed.
  void read();
}
