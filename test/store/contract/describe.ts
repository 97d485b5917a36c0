// One contract suite on one backend: a fresh store and clock for each test, closed after it, the backend torn down
// at the end; skipped, its name saying why, when the backend cannot run here (no PostgreSQL server).
import { afterAll, afterEach, beforeEach, describe } from "vitest";
import type { StoreBackend } from "./backends.js";
import { Clock, type ContractContext } from "./fixtures.js";

export function describeContract(title: string, backend: StoreBackend, body: (ctx: ContractContext) => void): void {
  const suite = backend.unavailable ? describe.skip : describe;
  suite(`${title} (${backend.name})${backend.unavailable ? ` skipped: ${backend.unavailable}` : ""}`, () => {
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
    body(ctx);
  });
}
