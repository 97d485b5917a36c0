// The daily quotas around the model a request calls: every call made on the task owner's behalf — its agents',
// their children's, call_agent callees', batch runs' and compaction's — holds its estimated cost first (refused when
// spending plus the calls under way reach a limit) and is settled to its cost after; a call that fails releases it.
// A call over a limit is refused (QuotaExceeded) and stops the run, so the step under way is the last one: the task
// then ends with the refusal as its status (endOverBudget), its stack closed.
import type { Model } from "../llm/model.js";
import { BudgetExceeded, guardedModel } from "./budget.js";
import type { QuotaLimit, Quotas } from "./quota.js";

export class QuotaExceeded extends BudgetExceeded {
  override name = "QuotaExceeded";
  constructor(
    readonly limit: QuotaLimit,
    message: string,
  ) {
    super(message);
  }
}

/**
 * `model` as `owner`'s request `requestId` in `chat` calls it under the quotas; `stop` ends the run on a refusal
 * (recorded as the request's).
 */
export function quotaModel(model: Model, quotas: Quotas, owner: string, chat: string, stop: (reason: QuotaExceeded) => void, requestId?: string): Model {
  return guardedModel(model, async (request) => {
    const held = await quotas.hold(owner, chat, request, requestId);
    if (held.status === "refused") {
      const refused = new QuotaExceeded(held.refusal.limit, held.refusal.text);
      stop(refused);
      throw refused;
    }
    let response: Awaited<ReturnType<Model["complete"]>>;
    try {
      response = await model.complete(request);
    } catch (error) {
      await held.release();
      throw error;
    }
    await held.settle(response.usage.costNanoUsd ?? 0);
    return response;
  });
}
