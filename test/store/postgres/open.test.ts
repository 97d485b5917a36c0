// Opening the PostgreSQL store: migrating as an ordinary role, refusing a database from a newer Switchboard,
// and saying clearly (without the password) why a connection failed.
import { createServer } from "node:net";
import { afterEach, beforeEach, expect, it } from "vitest";
import { SCHEMA_VERSION } from "../../../src/store/postgres/migrations.js";
import { PostgresStore } from "../../../src/store/postgres/postgres-store.js";
import { adminQuery, describeIfPostgres, freshDatabase, type FreshDatabase } from "../../helpers/postgres.js";

/** `url` with another password (or port). */
function alter(url: string, change: { password?: string; port?: number }): string {
  const u = new URL(url);
  if (change.password !== undefined) u.password = change.password;
  if (change.port !== undefined) u.port = String(change.port);
  return u.toString();
}

/** A port nothing listens on (bound, then released). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describeIfPostgres("PostgreSQL store: opening", () => {
  let database: FreshDatabase;
  beforeEach(async () => {
    database = await freshDatabase();
  });
  afterEach(async () => {
    await database.drop();
  });

  it("creates the schema as an ordinary role that only owns its database", async (test) => {
    const { rows } = await adminQuery<{ super: boolean }>(database, `SELECT rolsuper AS super FROM pg_roles WHERE rolname = $1`, [
      decodeURIComponent(new URL(database.url).username),
    ]);
    if (rows[0]?.super) return test.skip("TEST_DATABASE_URL logs in as a superuser; this test needs an ordinary role");
    const store = await PostgresStore.open(database.url);
    await store.requests.insert({ id: "r1", sessionKey: "telegram:1", externalId: "m1", kind: "message", userId: "telegram:1", text: "hi" });
    expect((await store.requests.get("r1"))?.status).toBe("pending");
    await store.close();
    const versions = await adminQuery<{ version: number }>(database, `SELECT version FROM schema_migrations ORDER BY version`);
    expect(versions.rows.map((r) => r.version)).toEqual(Array.from({ length: SCHEMA_VERSION }, (_, i) => i + 1));
  });

  it("opening again migrates nothing more", async () => {
    await (await PostgresStore.open(database.url)).close();
    await (await PostgresStore.open(database.url)).close();
    const { rows } = await adminQuery<{ n: number }>(database, `SELECT count(*)::int AS n FROM schema_migrations`);
    expect(rows[0]?.n).toBe(SCHEMA_VERSION);
  });

  it("refuses a database a newer Switchboard has migrated, naming both versions", async () => {
    await (await PostgresStore.open(database.url)).close();
    await adminQuery(database, `INSERT INTO schema_migrations (version) VALUES ($1)`, [SCHEMA_VERSION + 5]);
    await expect(PostgresStore.open(database.url)).rejects.toThrow(
      `the database is at schema version ${SCHEMA_VERSION + 5}, newer than this Switchboard (schema version ${SCHEMA_VERSION})`,
    );
  });

  it("a wrong password fails with a message naming the user and not the password", async () => {
    const password = "not-the-right-password-4711";
    const error = await PostgresStore.open(alter(database.url, { password })).then(
      () => null,
      (e: unknown) => e as Error,
    );
    expect(error?.message).toMatch(/^cannot connect to PostgreSQL at postgres:\/\/switchboard@.*: the password was refused/);
    expect(error?.message).not.toContain(password);
    expect(String(error?.stack)).not.toContain(password);
  });

  it("an unreachable server fails with a message saying so, without the password", async () => {
    const url = alter(database.url, { port: await closedPort() });
    const password = decodeURIComponent(new URL(url).password);
    const error = await PostgresStore.open(url).then(
      () => null,
      (e: unknown) => e as Error,
    );
    expect(error?.message).toContain("the connection was refused");
    expect(error?.message).not.toContain(password);
  });

  it("a URL that is not postgres:// is refused before connecting", async () => {
    await expect(PostgresStore.open("mysql://u:p@127.0.0.1/db")).rejects.toThrow("DATABASE_URL must start with postgres://");
  });

  it("close is idempotent, and a closed store rejects calls", async () => {
    const store = await PostgresStore.open(database.url);
    await Promise.all([store.close(), store.close()]);
    await store.close();
    await expect(store.ping()).rejects.toThrow();
  });
});
