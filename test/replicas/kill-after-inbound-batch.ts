// Preloaded into a gateway process by inbound-sigkill.test.ts (`node --import tsx --import <this>`): with
// KILL_AFTER_INBOUND=1 the process SIGKILLs itself right after PostgreSQL committed the batch that stored an inbound
// message (src/store/postgres/admitted-insert.ts), before the gateway or the platform heard of it: the message is
// stored, its session not woken, its update not confirmed. It says so on stderr first. Without the variable it
// changes nothing.
import { PostgresRequests } from "../../src/store/postgres/requests.js";
import type { InsertResult, NewRequest } from "../../src/store/store.js";

if (process.env.KILL_AFTER_INBOUND === "1") {
  const requests = PostgresRequests.prototype as unknown as { insert(input: NewRequest): Promise<InsertResult> };
  // oxlint-disable-next-line typescript/unbound-method -- kept to be called with the role as `this`, below
  const insert = requests.insert;
  requests.insert = async function (this: unknown, input: NewRequest) {
    const result = await insert.call(this, input);
    if (result.status === "inserted") {
      process.stderr.write(`KILLED after the inbound request ${input.id} committed (owner rule ${input.owner ?? "none"})\n`);
      process.kill(process.pid, "SIGKILL");
      for (;;); // the signal lands before anything else runs
    }
    return result;
  };
}
