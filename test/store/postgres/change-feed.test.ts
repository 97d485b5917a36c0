// The PostgreSQL change feed beyond the contract: what a notification carries and who can read or forge it,
// changes over NOTIFY's size limit, connections that drop.
import pg from "pg";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { PostgresStore } from "../../../src/store/postgres/postgres-store.js";
import { adminQuery, describeIfPostgres, freshDatabase, otherRole, serverAdminQuery, type FreshDatabase } from "../../helpers/postgres.js";
import { ChangeRecorder, isRequest } from "../contract/changes-recorder.js";
import { newRequest, outbound } from "../contract/fixtures.js";
import { captureLog, type CapturedLog } from "./log-capture.js";
import { commitStep } from "../../helpers/steps.js";

const K = "telegram:100";

/** A plain connection LISTENing on the feed's channel, as anyone who can connect may. */
async function listen(url: string) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const payloads: string[] = [];
  const waiting: Array<{ count: number; resolve: () => void }> = [];
  client.on("notification", (n) => {
    payloads.push(n.payload ?? "");
    for (const w of [...waiting]) if (payloads.length >= w.count) w.resolve();
  });
  await client.query("LISTEN switchboard_changes");
  return {
    client,
    /** The first `count` payloads heard (waits for them). */
    async received(count: number): Promise<string[]> {
      if (payloads.length < count) await new Promise<void>((resolve) => waiting.push({ count, resolve }));
      return payloads.slice(0, count);
    },
    end: () => client.end(),
  };
}

describeIfPostgres("PostgreSQL store: change feed", () => {
  let database: FreshDatabase;
  let logs: CapturedLog;
  let store: PostgresStore;
  let changes: ChangeRecorder;

  beforeEach(async () => {
    database = await freshDatabase();
    logs = captureLog();
    store = await PostgresStore.open(database.url, { log: logs.log });
    changes = new ChangeRecorder(store);
  });
  afterEach(async () => {
    changes.close();
    await store.close();
    await database.drop();
  });

  /** Ends the store's connections of one kind from the server side, as a restart or an admin would. */
  const terminate = (applicationName: string) =>
    serverAdminQuery(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND application_name = $2`, [database.name, applicationName]);

  it("a step queuing more replies than one notification could carry commits, and every request id is announced", async () => {
    const requestIds = Array.from({ length: 400 }, (_, i) => `request-${String(i).padStart(4, "0")}-${"x".repeat(60)}`);
    await commitStep(store, { sessionKey: K, outbound: requestIds.map((requestId, i) => outbound(`o${i}`, { requestId })) });
    expect(await store.outbox.pending(K)).toHaveLength(400);
    const change = await changes.waitFor((c) => c.kind === "outbound");
    expect(change.kind === "outbound" && change.requestIds).toEqual(requestIds);
  });

  it("an announced change longer than a notification may be arrives whole (the feed table has no such limit)", async () => {
    const agent = `agent:${"a".repeat(20_000)}`;
    await store.feed.announce({ kind: "stack", sessionKey: K, event: { type: "push", agent, depth: 1 } });
    expect(await changes.waitFor((c) => c.kind === "stack")).toEqual({ kind: "stack", sessionKey: K, event: { type: "push", agent, depth: 1 } });
  });

  it("deltas announced faster than they can be written arrive in order, each once, and before a step committed after them", async () => {
    const texts = Array.from({ length: 300 }, (_, i) => `word${i} `);
    const sent = texts.map((text) => store.feed.announce({ kind: "delta", sessionKey: K, requestId: "r1", event: { agent: "main", depth: 1, text } }));
    await commitStep(store, { sessionKey: K, outbound: [outbound("o1", { requestId: "r1" })] });
    await Promise.all(sent);
    await changes.waitFor((c) => c.kind === "outbound");
    const heard = changes.seen.flatMap((c) => (c.kind === "delta" ? [c.event.text] : c.kind === "outbound" ? ["<outbound>"] : []));
    expect(heard).toEqual([...texts, "<outbound>"]);
  });

  it("a notification carries a row id only: no session key, no request id, no streamed text", async () => {
    const spy = await listen(database.url);
    try {
      await store.requests.insert(newRequest("r1", K));
      await store.feed.announce({ kind: "delta", sessionKey: K, requestId: "r1", event: { agent: "main", depth: 1, text: "the reply as it is written" } });
      await commitStep(store, { sessionKey: K, outbound: [outbound("o1", { requestId: "r1" })] });
      await changes.waitFor((c) => c.kind === "outbound");
      const payloads = await spy.received(3);
      for (const payload of payloads) expect(payload).toMatch(/^[1-9][0-9]*$/);
    } finally {
      await spy.end();
    }
  });

  describe("another role on the same database (any role may connect unless CONNECT is revoked)", () => {
    let other: { url: string; drop(): Promise<void> };
    /** That role, LISTENing on the feed's channel. */
    let spy: Awaited<ReturnType<typeof listen>>;
    beforeEach(async () => {
      other = await otherRole(database);
      spy = await listen(other.url);
    });
    afterEach(async () => {
      await spy.end();
      await other.drop();
    });

    it("hears the ids but cannot read what they name", async () => {
      await store.feed.announce({ kind: "delta", sessionKey: K, requestId: "r1", event: { agent: "main", depth: 1, text: "private words" } });
      const [id] = await spy.received(1);
      expect(id).toMatch(/^[1-9][0-9]*$/);
      await expect(spy.client.query("SELECT change FROM change_feed WHERE id = $1", [id])).rejects.toThrow(/permission denied/);
      await expect(spy.client.query("INSERT INTO change_feed (change) VALUES ('{}')")).rejects.toThrow(/permission denied/);
    });

    it("cannot forge a change: made-up changes, unknown ids and replayed real ids reach no watcher; real changes still arrive", async () => {
      await store.feed.announce({ kind: "delta", sessionKey: K, requestId: "r1", event: { agent: "main", depth: 1, text: "the real words" } });
      const [real] = await spy.received(1);
      await changes.waitFor((c) => c.kind === "delta");
      const forged = [
        "not json",
        '{"kind":"delta","sessionKey":"telegram:100","requestId":"r1","event":{"agent":"main","depth":1,"text":"injected"}}',
        '{"kind":"stack","sessionKey":"telegram:100","event":{"type":"push","agent":"skill:evil","depth":2}}',
        String(Number(real) + 1000),
        "0",
        "-1",
        real!,
        real!,
      ];
      for (const payload of forged) await spy.client.query("SELECT pg_notify('switchboard_changes', $1)", [payload]);
      await spy.received(1 + forged.length);
      // Everything the other role sent was heard before this marker; only the one real change was delivered.
      expect(await changes.settle()).toEqual([{ kind: "delta", sessionKey: K, requestId: "r1", event: { agent: "main", depth: 1, text: "the real words" } }]);
      expect(logs.lines.some((l) => JSON.stringify(l).includes("injected"))).toBe(false);
    });
  });

  it("a row is read for a minute only: an older id names nothing, and old rows are deleted", async () => {
    // A change written ten minutes ago (the database's clock decides), then its id on the channel.
    const change = JSON.stringify({ kind: "request", sessionKey: K, requestId: "stale" });
    const { rows } = await adminQuery<{ id: string }>(
      database,
      "INSERT INTO change_feed (change, created_at) VALUES ($1, now() - interval '10 minutes') RETURNING id::text AS id",
      [change],
    );
    await adminQuery(database, "SELECT pg_notify('switchboard_changes', $1)", [rows[0]!.id]);
    expect(await changes.settle()).toEqual([]);
    // The first change this replica wrote or read also had it delete rows older than two minutes.
    expect(await logs.waitFor("deleted old rows of the change feed")).toMatchObject({ rows: 1 });
    expect((await adminQuery(database, "SELECT id FROM change_feed WHERE id = $1", [rows[0]!.id])).rows).toEqual([]);
    expect(Number((await adminQuery<{ n: string }>(database, "SELECT count(*) AS n FROM change_feed")).rows[0]!.n)).toBe(1);
  });

  it("when the listening connection is killed, it reconnects and changes flow again", async () => {
    await terminate("switchboard-listener");
    await logs.waitFor("lost the PostgreSQL change feed connection");
    await logs.waitFor("listening to the PostgreSQL change feed again");
    await store.requests.insert(newRequest("r1", K));
    expect(await changes.waitFor(isRequest(K, "r1"))).toEqual({ kind: "request", sessionKey: K, requestId: "r1" });
  });

  it("pooled connections killed while idle are replaced; queries carry on", async () => {
    await store.ping();
    await terminate("switchboard");
    await logs.waitFor("a pooled PostgreSQL connection failed");
    await expect(store.ping()).resolves.toBeUndefined();
    await store.requests.insert(newRequest("r1", K));
    expect((await store.requests.get("r1"))?.status).toBe("pending");
  });

  it("ping rejects while the database refuses connections, and resolves once it accepts them again", async () => {
    await serverAdminQuery(`ALTER DATABASE ${database.name} ALLOW_CONNECTIONS false`);
    await terminate("switchboard");
    await logs.waitFor("a pooled PostgreSQL connection failed");
    await expect(store.ping()).rejects.toThrow(/not currently accepting connections/);
    await serverAdminQuery(`ALTER DATABASE ${database.name} ALLOW_CONNECTIONS true`);
    await expect(store.ping()).resolves.toBeUndefined();
  });
});
