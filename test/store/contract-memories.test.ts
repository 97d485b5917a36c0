// The Store contract for long-term memory and a user's data, on every backend (the same pattern as
// contract/suite.ts): memories and their search, the extraction job queue, exporting and erasing a user, and what
// a user keeps on the server.
import { BACKENDS } from "./contract/backends.js";
import { describeContract } from "./contract/describe.js";
import type { ContractContext } from "./contract/fixtures.js";
import { footprintContract } from "./contract/footprint.js";
import { memoryJobContract } from "./contract/memory-jobs.js";
import { memoryContract } from "./contract/memories.js";
import { userDataContract } from "./contract/user-data.js";

for (const backend of BACKENDS) describeContract("Store memory contract", backend, contract);

function contract(ctx: ContractContext): void {
  memoryContract(ctx);
  memoryJobContract(ctx);
  userDataContract(ctx);
  footprintContract(ctx);
}
