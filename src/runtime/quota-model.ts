// The daily quotas around the model a request calls: every call made on the task owner's behalf — its agents',
// their children's, call_agent callees', batch runs' and compaction's — is checked first and its cost counted after.
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

/** `model` as `owner`'s request in `chat` calls it under the quotas; `stop` ends the run on a refusal. */
export function quotaModel(model: Model, quotas: Quotas, owner: string, chat: string, stop: (reason: QuotaExceeded) => void): Model {
  return guardedModel(model, async (request) => {
    const refusal = await quotas.beforeCall(owner, chat);
    if (refusal) {
      const refused = new QuotaExceeded(refusal.limit, refusal.text);
      stop(refused);
      throw refused;
    }
    const response = await model.complete(request);
    await quotas.spent(owner, chat, response.usage.costNanoUsd ?? 0);
    return response;
  });
}
