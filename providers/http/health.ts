import type { ApiReads } from "../../src/gateway/index.js";

/**
 * What GET /readyz answers: ready when the database answers (so its migrations are done: the store opened) and
 * every other check (the chat providers' connections) reports null; else not_ready, naming what is not.
 */
export async function readiness(store: ApiReads, others: Record<string, string | null>) {
  const checks: Record<string, string> = {};
  const failing: Record<string, string> = {};
  try {
    await store.ping();
    checks.database = "ok";
  } catch (error) {
    failing.database = `not reachable: ${error instanceof Error ? error.message : String(error)}`;
  }
  for (const [name, problem] of Object.entries(others)) {
    if (problem === null) checks[name] = "ok";
    else failing[name] = problem;
  }
  const ok = Object.keys(failing).length === 0;
  return { status: ok ? ("ready" as const) : ("not_ready" as const), checks: { ...checks, ...failing } };
}
