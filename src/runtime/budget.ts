import { ModelError, type Model } from "../llm/model.js";
import { formatUsd, nanoToUsd } from "../llm/prices.js";
import type { Usage } from "../llm/types.js";
import type { SessionUsage } from "../store/store.js";

// SESSION_TOKEN_BUDGET and SESSION_COST_BUDGET_USD: what a conversation may spend between /resets. Checked before
// every model call a request makes — its agents', their children's, batch runs' and call_agent callees', and
// compaction's — and by the gateway before a request starts at all.

/** A session's budget; 0 means no limit. */
export interface SessionBudget {
  tokens: number;
  usd: number;
}

export function budgetOf(settings: { sessionTokenBudget?: number; sessionCostBudgetUsd?: number }): SessionBudget {
  return { tokens: settings.sessionTokenBudget ?? 0, usd: settings.sessionCostBudgetUsd ?? 0 };
}

/** Whether `budget` limits anything (a session without one is never stopped by it). */
export const limited = (budget: SessionBudget): boolean => budget.tokens > 0 || budget.usd > 0;

/** Why a session that used this much since its last /reset may not call the model any more; null when it may. */
export function overBudget(used: Pick<SessionUsage, "sinceReset" | "costSinceResetUsd">, budget: SessionBudget): string | null {
  const n = (x: number) => x.toLocaleString("en-US");
  if (budget.tokens > 0 && used.sinceReset >= budget.tokens) {
    return `This conversation has used ${n(used.sinceReset)} tokens, over its budget of ${n(budget.tokens)}. Send /reset to start a fresh one, or ask the admin to raise SESSION_TOKEN_BUDGET.`;
  }
  if (budget.usd > 0 && used.costSinceResetUsd >= budget.usd) {
    return `This conversation has cost ${formatUsd(used.costSinceResetUsd)}, over its budget of ${formatUsd(budget.usd)}. Send /reset to start a fresh one, or ask the admin to raise SESSION_COST_BUDGET_USD.`;
  }
  return null;
}

/** A model call refused because the session's budget is spent: the request's run is stopped with it as the reason. */
export class BudgetExceeded extends ModelError {
  override name = "BudgetExceeded";
}

/**
 * One request's spending against its session's budget: what the store counted when the request started, plus what
 * each of its model calls used as it returned (before any of it is committed, so calls that run side by side or
 * before the next commit are counted too).
 */
export class RequestBudget {
  private tokens: number;
  private nanoUsd: number;

  /** `stop` ends the request's run (its signal) once a call is refused. */
  constructor(
    used: SessionUsage,
    private readonly budget: SessionBudget,
    private readonly stop: (reason: BudgetExceeded) => void,
  ) {
    this.tokens = used.sinceReset;
    this.nanoUsd = Math.round(used.costSinceResetUsd * 1e9);
  }

  /** Why no further call may be made; null while one may. */
  exceeded(): string | null {
    return overBudget({ sinceReset: this.tokens, costSinceResetUsd: nanoToUsd(this.nanoUsd) }, this.budget);
  }

  /** `model` as this request calls it: a call over the budget is refused (BudgetExceeded) and stops the run. */
  model(model: Model): Model {
    return guardedModel(model, async (request) => {
      const over = this.exceeded();
      if (over) {
        const refused = new BudgetExceeded(over);
        this.stop(refused);
        throw refused;
      }
      const response = await model.complete(request);
      this.add(response.usage);
      return response;
    });
  }

  private add(usage: Usage): void {
    this.tokens += usage.inputTokens + usage.outputTokens + (usage.cacheReadTokens ?? 0) + (usage.cacheWriteTokens ?? 0);
    this.nanoUsd += usage.costNanoUsd ?? 0;
  }
}

/** `model` with its calls made through `complete` (which calls the model's own, or refuses). */
export function guardedModel(model: Model, complete: Model["complete"]): Model {
  return {
    configured: model.configured,
    setupHint: model.setupHint,
    defaultModel: model.defaultModel,
    contextLimit: (name) => model.contextLimit(name),
    complete,
  };
}

/** The request's spending guard, or null when the session has no budget. */
export async function requestBudget(usage: () => Promise<SessionUsage>, budget: SessionBudget, stop: (reason: BudgetExceeded) => void): Promise<RequestBudget | null> {
  return limited(budget) ? new RequestBudget(await usage(), budget, stop) : null;
}
