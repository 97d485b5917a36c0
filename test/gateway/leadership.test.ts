// A job that runs on one replica at a time (Telegram long polling): two replicas on one store, one runs it; when
// it stops or dies, the other takes it over; a replica that lost it stops running it.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { Leadership } from "../../src/gateway/leadership.js";
import { silentLogger } from "../../src/log.js";
import { SqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import { deferred } from "../helpers/deferred.js";

let dir: string;
let now = 1_000;
let stores: SqliteStore[] = [];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "switchboard-leader-"));
  stores = [];
});
afterEach(async () => {
  for (const s of stores) await s.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A replica: its own connection to the shared database, and a record of when it ran the job. */
function replica(name: string) {
  const store = new SqliteStore(join(dir, "db.sqlite"), () => now);
  stores.push(store);
  // A paused process (a long GC, a frozen VM): its renewals wait until it is thawed.
  let thawed: Promise<void> = Promise.resolve();
  let thaw = () => {};
  const { leases } = store;
  const pausable = {
    leases: {
      acquire: leases.acquire.bind(leases),
      renew: (...args: Parameters<typeof leases.renew>) => thawed.then(() => leases.renew(...args)),
      release: leases.release.bind(leases),
      get: leases.get.bind(leases),
      orphanedSessions: leases.orphanedSessions.bind(leases),
    },
  };
  const events: string[] = [];
  let gained = deferred<void>();
  let lost = deferred<void>();
  const leadership = new Leadership(pausable, {
    key: "@telegram-polling",
    replica: name,
    ttlMs: 300,
    log: silentLogger(),
    onGain: () => {
      events.push("gain");
      gained.resolve();
    },
    onLose: () => {
      events.push("lose");
      lost.resolve();
    },
  });
  return {
    leadership,
    events,
    store,
    freeze() {
      const gate = deferred<void>();
      thawed = gate.promise;
      thaw = () => gate.resolve();
    },
    thaw: () => thaw(),
    gained: () => gained.promise.then(() => void (gained = deferred())),
    lost: () => lost.promise.then(() => void (lost = deferred())),
  };
}

it("runs on the first replica only; the second takes over when the first stops", async () => {
  const a = replica("A");
  const b = replica("B");
  await a.leadership.start();
  await b.leadership.start();
  expect([a.leadership.leading, b.leadership.leading]).toEqual([true, false]);
  await a.leadership.stop(); // gives the lease back at once
  await b.gained();
  expect(a.events).toEqual(["gain", "lose"]);
  expect(b.events).toEqual(["gain"]);
  await b.leadership.stop();
});

it("a replica that froze is taken over once its lease runs out, and it stops the job when it thaws", async () => {
  const a = replica("A");
  const b = replica("B");
  await a.leadership.start();
  await b.leadership.start();
  // A freezes (its renewals stop) and its lease runs out: B takes the job with a new token.
  a.freeze();
  const token = (await a.store.leases.get("@telegram-polling"))!.token;
  now += 10_000;
  await b.gained();
  expect((await b.store.leases.get("@telegram-polling"))!.token).toBe(token + 1);
  // A thaws; its renewal finds the lease taken: it stops running the job.
  a.thaw();
  await a.lost();
  expect(a.leadership.leading).toBe(false);
  expect(b.leadership.leading).toBe(true);
  await a.leadership.stop();
  await b.leadership.stop();
});
