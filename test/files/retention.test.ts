// The retention loop (FILE_RETENTION_DAYS) on a hand-driven clock and hand-fired timers: a pass at start and one
// per hour, each deleting the bytes of files older than the retention, counted in /metrics; nothing at 0.
import { createHash } from "node:crypto";
import pino from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DAY_MS, FileRetention, RETENTION_EVERY_MS } from "../../src/files/retention.js";
import { SqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import { retentionMetrics } from "../../src/telemetry/files.js";
import { Metrics } from "../../src/telemetry/metrics.js";
import { Clock, newRequest } from "../store/contract/fixtures.js";
import { commitStep } from "../helpers/steps.js";
import { manualTimeouts } from "../helpers/timers.js";

const K = "telegram:42";
let clock: Clock;
let store: SqliteStore;

beforeEach(() => {
  clock = new Clock(Date.UTC(2026, 0, 1));
  store = new SqliteStore(":memory:", clock.now);
});
afterEach(async () => {
  await store.close();
});

async function receive(id: string, content: string): Promise<string> {
  const bytes = Buffer.from(content);
  const sha256 = createHash("sha256").update(bytes).digest("hex");
  const file = {
    id,
    publicId: `file_${id.padEnd(24, "x")}`,
    sha256,
    name: `${id}.csv`,
    mime: "text/csv",
    kind: "text" as const,
    size: bytes.length,
    voice: false,
    bytes,
  };
  await store.requests.insert(newRequest(`r-${id}`, K, { files: [file] }));
  await commitStep(store, { sessionKey: K, request: { id: `r-${id}`, status: "done" } });
  return sha256;
}

function retention(days: number, time = manualTimeouts()) {
  const metrics = new Metrics(() => store.operations.operationalCounts());
  const loop = new FileRetention({ store, days, now: clock.now, timers: time.timers, log: pino({ level: "silent" }), observer: retentionMetrics(metrics) });
  return { loop, time, metrics };
}

describe("FileRetention", () => {
  it("deletes, at start and then every hour, the bytes of files older than FILE_RETENTION_DAYS", async () => {
    const old = await receive("f1", "a,b\n1,2\n");
    const { loop, time, metrics } = retention(3);
    loop.start();
    expect(time.delays()).toEqual([RETENTION_EVERY_MS]);
    expect(await loop.pass()).toEqual({ contents: 0, files: 0, bytes: 0 });

    clock.advance(2 * DAY_MS);
    const fresh = await receive("f2", "c,d\n");
    clock.advance(DAY_MS + 1);
    time.fire(RETENTION_EVERY_MS);
    expect(await loop.pass()).toEqual({ contents: 1, files: 1, bytes: 8 });
    expect(await store.files.bytes(K, old)).toBeNull();
    expect(await store.files.get("f1")).toMatchObject({ expiredAt: clock.t });
    expect((await store.files.bytes(K, fresh))?.toString()).toBe("c,d\n");
    expect(time.delays()).toEqual([RETENTION_EVERY_MS]);

    const text = (await metrics.render()).body;
    expect(text).toContain("switchboard_files_expired_total 1");
    expect(text).toContain("switchboard_file_bytes_expired_total 8");

    await loop.stop();
    expect(time.delays()).toEqual([]);
  });

  it("keeps every file and sets no timer when FILE_RETENTION_DAYS is 0", async () => {
    const sha = await receive("f1", "kept");
    clock.advance(10_000 * DAY_MS);
    const { loop, time } = retention(0);
    loop.start();
    expect(time.delays()).toEqual([]);
    expect(await loop.pass()).toEqual({ contents: 0, files: 0, bytes: 0 });
    expect((await store.files.bytes(K, sha))?.toString()).toBe("kept");
  });

  it("goes on after a pass that failed, and tries again at the next hour", async () => {
    await receive("f1", "old");
    clock.advance(5 * DAY_MS);
    const { loop, time } = retention(1);
    const expire = store.files.expire.bind(store.files);
    let failures = 1;
    store.files.expire = (...args) => (failures-- > 0 ? Promise.reject(new Error("disk I/O error")) : expire(...args));
    loop.start();
    expect(await loop.pass()).toEqual({ contents: 0, files: 0, bytes: 0 });
    time.fire(RETENTION_EVERY_MS);
    expect(await loop.pass()).toMatchObject({ contents: 1 });
    await loop.stop();
  });
});
