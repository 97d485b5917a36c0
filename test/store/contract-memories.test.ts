// The Store contract for long-term memory and a user's data, on every backend (the same pattern as
// contract/suite.ts): memories and their search, the extraction job queue, exporting and erasing a user, and what
// a user keeps on the server.
import { afterAll, afterEach, beforeEach, describe } from "vitest";
import { BACKENDS, type StoreBackend } from "./contract/backends.js";
import { Clock, type ContractContext } from "./contract/fixtures.js";
import { footprintContract } from "./contract/footprint.js";
import { memoryJobContract } from "./contract/memory-jobs.js";
import { memoryContract } from "./contract/memories.js";
import { userDataContract } from "./contract/user-data.js";

for (const backend of BACKENDS) {
  const suite = backend.unavailable ? describe.skip : describe;
  suite(`Store memory contract (${backend.name})${backend.unavailable ? ` skipped: ${backend.unavailable}` : ""}`, () => contract(backend));
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

  memoryContract(ctx);
  memoryJobContract(ctx);
  userDataContract(ctx);
  footprintContract(ctx);
}
