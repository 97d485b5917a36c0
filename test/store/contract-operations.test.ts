// The Store contract for costs and the operator's queries, on every backend (the same pattern as
// contract/suite.ts): cost beside token usage, session summaries, stuck work, recent errors, the gauges' counts, and
// the daily usage counters of the quotas and their holds.
import { afterAll, afterEach, beforeEach, describe } from "vitest";
import { BACKENDS, type StoreBackend } from "./contract/backends.js";
import { costContract } from "./contract/costs.js";
import { Clock, type ContractContext } from "./contract/fixtures.js";
import { operationsContract } from "./contract/operations.js";
import { usageContract } from "./contract/usage.js";
import { usageHoldsContract } from "./contract/usage-holds.js";

for (const backend of BACKENDS) {
  const suite = backend.unavailable ? describe.skip : describe;
  suite(`Store operations contract (${backend.name})${backend.unavailable ? ` skipped: ${backend.unavailable}` : ""}`, () => contract(backend));
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

  costContract(ctx);
  operationsContract(ctx);
  usageContract(ctx);
  usageHoldsContract(ctx);
}
