import pg from "pg";

/**
 * Counts what this process sends to PostgreSQL through `Client.query` (the pool's queries and transactions go
 * through it: BEGIN and COMMIT count): round trips, and statements, where a batch (src/store/postgres/
 * statement-batch.ts) is one round trip carrying the number of statements its first query names (its BEGIN and
 * COMMIT not counted, as a simple query's implicit transaction was not). By statement name, so a scenario can say
 * which ones a user message costs. `stop()` puts `query` back.
 */
export function countStatements(): { statements(): number; roundTrips(): number; byName(): Map<string, number>; stop(): void } {
  const proto = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const original = proto.query;
  const counts = new Map<string, number>();
  let statements = 0;
  let roundTrips = 0;
  proto.query = function (this: unknown, ...args: unknown[]) {
    const config = args[0] as string | { name?: string; text?: string; pipelined?: number } | undefined;
    const pipelined = typeof config === "object" ? config?.pipelined : undefined;
    // A pipelined batch (statement-batch.ts): its first query stands for the round trip, the rest ride along.
    if (pipelined === 0) return original.apply(this, args);
    const text = typeof config === "string" ? config : (config?.name ?? config?.text ?? "?");
    roundTrips++;
    statements += pipelined ?? 1;
    const name = pipelined ? `(a batch: ${pipelined} statements pipelined in one round trip)` : text;
    counts.set(name, (counts.get(name) ?? 0) + 1);
    return original.apply(this, args);
  };
  return {
    statements: () => statements,
    roundTrips: () => roundTrips,
    byName: () => counts,
    stop: () => {
      proto.query = original;
    },
  };
}
