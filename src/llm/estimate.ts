// What a model call may cost before it is made, for the daily quotas to hold while it runs: its input as estimated
// locally (at the full input price: what the prompt cache saves is not known yet) plus max_tokens of output, at the
// requested model's price. A fallback model answering instead is priced at the model asked for; the hold is settled
// to the real cost either way.
import type { PriceTable } from "./prices.js";
import { estimateRequest } from "./tokens.js";
import type { ModelRequest } from "./types.js";

/** The most a call is expected to cost, in nano-USD; `maxTokens` is the default when a request sets none (ANTHROPIC_MAX_TOKENS). */
export function callEstimate(prices: PriceTable, maxTokens: number): (request: ModelRequest) => number {
  return (request) => prices.costNanoUsd(request.model, { inputTokens: estimateRequest(request), outputTokens: request.maxTokens ?? maxTokens });
}
