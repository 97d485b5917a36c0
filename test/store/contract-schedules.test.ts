// The Store contract for scheduled jobs and users' time zones, on every backend (the same pattern as
// contract.test.ts).
import { afterAll, afterEach, beforeEach, describe } from "vitest";
import { BACKENDS, type StoreBackend } from "./contract/backends.js";
import { Clock, type ContractContext } from "./contract/fixtures.js";
import { scheduleContract } from "./contract/schedules.js";

for (const backend of BACKENDS) {
  const suite = backend.unavailable ? describe.skip : describe;
  suite(`Store schedules contract (${backend.name})${backend.unavailable ? ` skipped: ${backend.unavailable}` : ""}`, () => contract(backend));
}

function contract(backend: StoreBackend): void {
  const ctx = { backend } as ContractContext;
  beforeEach(async () => {
    ctx.clock = new Clock();
    ctx.store = await backend.open(ctx.clock.now);
  });
  afterEach(async () => {
    await backend.close(ctx.store);
  });
  afterAll(async () => {
    await backend.teardown?.();
  });

  scheduleContract(ctx);
}
