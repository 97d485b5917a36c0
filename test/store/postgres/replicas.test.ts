// Several replicas on one PostgreSQL database: what only a shared database can get wrong (migrating at the same
// moment, two claimers, two lease takers, changes crossing between stores).
import { afterEach, beforeEach, expect, it } from "vitest";
import { SCHEMA_VERSION } from "../../../src/store/postgres/migrations.js";
import { PostgresStore } from "../../../src/store/postgres/postgres-store.js";
import { FencedError } from "../../../src/store/store.js";
import { adminQuery, describeIfPostgres, freshDatabase, type FreshDatabase } from "../../helpers/postgres.js";
import { ChangeRecorder, isDone, isOutbound, isRequest } from "../contract/changes-recorder.js";
import { newRequest, outbound } from "../contract/fixtures.js";
import { commitStep } from "../../helpers/steps.js";

const K = "telegram:100";

describeIfPostgres("PostgreSQL store: replicas sharing one database", () => {
  let database: FreshDatabase;
  const opened: PostgresStore[] = [];
  const open = async () => {
    const store = await PostgresStore.open(database.url, { poolMax: 4 });
    opened.push(store);
    return store;
  };

  beforeEach(async () => {
    database = await freshDatabase();
  });
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((s) => s.close()));
    await database.drop();
  });

  it("replicas opening at the same moment all start, and each migration is applied exactly once", async () => {
    const stores = await Promise.all([open(), open(), open(), open()]);
    expect(stores).toHaveLength(4);
    const { rows } = await adminQuery<{ version: number; times: number }>(
      database,
      `SELECT version, count(*)::int AS times FROM schema_migrations GROUP BY version ORDER BY version`,
    );
    expect(rows).toEqual(Array.from({ length: SCHEMA_VERSION }, (_, i) => ({ version: i + 1, times: 1 })));
    await Promise.all(stores.map((s) => s.ping()));
  });

  it("two replicas claiming one session's replies at once never get the same reply and leave none behind", async () => {
    const [a, b] = await Promise.all([open(), open()]);
    const ids = Array.from({ length: 300 }, (_, i) => `o${String(i).padStart(3, "0")}`);
    await commitStep(a, { sessionKey: K, outbound: ids.map((id) => outbound(id)) });
    const claimed: string[] = [];
    const drain = async (store: PostgresStore) => {
      for (let o = await store.outbox.claimNext(K); o; o = await store.outbox.claimNext(K)) claimed.push(o.id);
    };
    // Three claimers per replica, so claims really overlap in the database.
    await Promise.all([drain(a), drain(a), drain(a), drain(b), drain(b), drain(b)]);
    expect(claimed).toHaveLength(ids.length);
    expect([...claimed].sort()).toEqual(ids);
    expect(await b.outbox.pending(K)).toEqual([]);
  });

  it("of two replicas taking the same leases at once, exactly one wins each", async () => {
    const [a, b] = await Promise.all([open(), open()]);
    const keys = Array.from({ length: 40 }, (_, i) => `telegram:${i}`);
    const results = await Promise.all(keys.map((key) => Promise.all([a.leases.acquire(key, "replica-a", 10_000), b.leases.acquire(key, "replica-b", 10_000)])));
    for (const [i, [fromA, fromB]] of results.entries()) {
      const winners = [fromA, fromB].filter((l) => l !== null);
      expect(winners, keys[i]).toHaveLength(1);
      expect(winners[0]?.token).toBe(1);
      expect(await a.leases.get(keys[i]!)).toEqual(winners[0]);
    }
  });

  it("of two members writing into the same new conversations at once through two replicas, exactly one owns each", async () => {
    const [a, b] = await Promise.all([open(), open()]);
    const keys = Array.from({ length: 40 }, (_, i) => `telegram:-100${i}`);
    const results = await Promise.all(
      keys.map((key, i) =>
        Promise.all([
          a.requests.insert(newRequest(`ra${i}`, key, { userId: "telegram:alice", owner: "mine-or-free" })),
          b.requests.insert(newRequest(`rb${i}`, key, { userId: "telegram:bob", owner: "mine-or-free" })),
        ]),
      ),
    );
    for (const [i, pair] of results.entries()) {
      const stored = pair.flatMap((r) => (r.status === "inserted" ? [r.request.userId] : []));
      expect(stored, keys[i]).toHaveLength(1);
      expect(
        pair.find((r) => r.status === "busy"),
        keys[i],
      ).toEqual({ status: "busy", ownerId: stored[0] });
      expect(await b.requests.conversationOwner(keys[i]!)).toBe(stored[0]);
    }
  });

  it("a step fenced by one replica fails once another replica took the lease over", async () => {
    let now = 1_000_000;
    const clock = () => now;
    const a = await PostgresStore.open(database.url, { now: clock });
    const b = await PostgresStore.open(database.url, { now: clock });
    opened.push(a, b);
    await a.requests.insert(newRequest("r1", K));
    const lease = (await a.leases.acquire(K, "replica-a", 5_000))!;
    const stale = a.steps.writer(lease);
    now += 5_000;
    const taken = (await b.leases.acquire(K, "replica-b", 5_000))!;
    expect(taken.token).toBe(lease.token + 1);
    await expect(stale.commit({ request: { id: "r1", status: "done" } })).rejects.toThrow(FencedError);
    expect((await b.requests.get("r1"))?.status).toBe("pending");
    await b.steps.writer(taken).commit({ request: { id: "r1", status: "done" } });
    expect((await a.requests.get("r1"))?.status).toBe("done");
  });

  it("a change committed by one replica reaches the other replica's watchers, and its own", async () => {
    const [a, b] = await Promise.all([open(), open()]);
    const onA = new ChangeRecorder(a);
    const onB = new ChangeRecorder(b);
    await a.requests.insert(newRequest("r1", K));
    await commitStep(a, { sessionKey: K, request: { id: "r1", status: "done" }, outbound: [outbound("o1", { requestId: "r1" })] });
    for (const seen of [onB, onA]) {
      await seen.waitFor(isRequest(K, "r1"));
      await seen.waitFor(isDone(K, "r1"));
      expect(await seen.waitFor(isOutbound(K))).toEqual({ kind: "outbound", sessionKey: K, requestIds: ["r1"] });
    }
    await b.feed.announce({ kind: "stack", sessionKey: K, event: { type: "pop", agent: "skill:research", depth: 0 } });
    expect((await onA.waitFor((c) => c.kind === "stack")).sessionKey).toBe(K);
    onA.close();
    onB.close();
  });
});
