// Databases from before a failed request stored its code (SQLite version 23, PostgreSQL version 15): a request failed
// then with a server-side failure's fixed words gets that failure's code, so a waiter still reads it as failed (as it
// did by its words); any other old failure has no code and reads as finished (as it did then); a request failed after
// the upgrade carries its code.
import { afterEach, describe, expect, it } from "vitest";
import { FAILURE_TEXT, storedOutcome } from "../../src/gateway/failures.js";
import type { Store } from "../../src/store/store.js";
import { fromOldPostgres, fromOldSqlite } from "../helpers/old-schema.js";
import { describeIfPostgres, freshDatabase, type FreshDatabase } from "../helpers/postgres.js";
import { commitStep } from "../helpers/steps.js";
import { newRequest } from "./contract/fixtures.js";

const K = "telegram:1";
const OLD_ROWS = [
  `INSERT INTO requests (id, session_key, external_id, kind, user_id, text, status, error, created_at, updated_at)
   VALUES ('r-old', '${K}', 'm1', 'message', 'telegram:1', 'hi', 'failed', '${FAILURE_TEXT.internal.replaceAll("'", "''")}', 1, 1)`,
  `INSERT INTO requests (id, session_key, external_id, kind, user_id, text, status, error, created_at, updated_at)
   VALUES ('r-done', '${K}', 'm2', 'message', 'telegram:1', 'hi', 'done', NULL, 1, 1)`,
  `INSERT INTO requests (id, session_key, external_id, kind, user_id, text, status, error, created_at, updated_at)
   VALUES ('r-full', '${K}', 'm3', 'message', 'telegram:1', 'hi', 'failed', '${FAILURE_TEXT.store_failing.replaceAll("'", "''")}', 1, 1)`,
  `INSERT INTO requests (id, session_key, external_id, kind, user_id, text, status, error, created_at, updated_at)
   VALUES ('r-model', '${K}', 'm4', 'message', 'telegram:1', 'hi', 'failed', 'the model is overloaded', 1, 1)`,
];

async function expectUpgraded(store: Store): Promise<void> {
  const old = (await store.requests.get("r-old"))!;
  expect(old).toMatchObject({ status: "failed", error: FAILURE_TEXT.internal, errorCode: "internal" });
  expect(storedOutcome(old)).toEqual({ status: "failed", code: "internal" });
  expect(storedOutcome((await store.requests.get("r-full"))!)).toEqual({ status: "failed", code: "store_failing" });
  const model = (await store.requests.get("r-model"))!;
  expect(model.errorCode).toBeNull();
  expect(storedOutcome(model)).toEqual({ status: "finished" });
  expect((await store.requests.get("r-done"))?.errorCode).toBeNull();
  await store.requests.insert(newRequest("r-new", K));
  await commitStep(store, { sessionKey: K, request: { id: "r-new", status: "failed", error: FAILURE_TEXT.internal, errorCode: "internal" } });
  expect(storedOutcome((await store.requests.get("r-new"))!)).toEqual({ status: "failed", code: "internal" });
}

describe("SQLite: upgrading requests from schema version 23", () => {
  it("gives old server-side failures their code by their words, others none; new ones carry theirs", async () => {
    await fromOldSqlite(23, OLD_ROWS, expectUpgraded);
  });
});

describeIfPostgres("PostgreSQL: upgrading requests from schema version 15", () => {
  let database: FreshDatabase | null = null;
  afterEach(async () => {
    await database?.drop();
    database = null;
  });

  it("gives old server-side failures their code by their words, others none; new ones carry theirs", async () => {
    database = await freshDatabase();
    await fromOldPostgres(database, 15, OLD_ROWS, expectUpgraded);
  });
});
