// The Store contract for costs and the operator's queries, on every backend (the same pattern as
// contract/suite.ts): cost beside token usage, session summaries, stuck work, recent errors, the gauges' counts, and
// the daily usage counters of the quotas and their holds.
import { BACKENDS } from "./contract/backends.js";
import { describeContract } from "./contract/describe.js";
import { costContract } from "./contract/costs.js";
import type { ContractContext } from "./contract/fixtures.js";
import { operationsContract } from "./contract/operations.js";
import { usageContract } from "./contract/usage.js";
import { usageHoldsContract } from "./contract/usage-holds.js";

for (const backend of BACKENDS) describeContract("Store operations contract", backend, contract);

function contract(ctx: ContractContext): void {
  costContract(ctx);
  operationsContract(ctx);
  usageContract(ctx);
  usageHoldsContract(ctx);
}
