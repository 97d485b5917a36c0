// The session budgets at the gateway (SESSION_TOKEN_BUDGET, SESSION_COST_BUDGET_USD): a spent conversation starts
// no task. Checked before a request starts; the runtime checks again before every model call.
import { budgetOf, overBudget } from "../runtime/budget.js";
import type { RuntimeDeps } from "../runtime/orchestrator.js";
import type { Store } from "../store/store.js";

/** Why the session may not call the model any more; null when it may. */
export async function sessionOverBudget(store: Pick<Store, "sessions">, settings: RuntimeDeps["settings"], sessionKey: string): Promise<string | null> {
  const budget = budgetOf(settings);
  if (budget.tokens <= 0 && budget.usd <= 0) return null;
  return overBudget(await store.sessions.usage(sessionKey), budget);
}
