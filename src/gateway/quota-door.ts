// The daily quotas at the gateway: a new message over USER_DAILY_MESSAGES, USER_DAILY_USD or CHAT_DAILY_USD starts
// no task. The first refusal of a limit each day is answered with which limit and when it resets; later ones end
// the request silently in a chat (its error says why), while the HTTP API is answered every time. /usage shows today's use against the limits.
import type { QuotaRefusal, Quotas } from "../runtime/quota.js";
import type { RequestRecord, SessionWriter } from "../store/store.js";
import { providerOf } from "./session-key.js";

/**
 * Counts `request` against its sender's quota, or refuses it: a refusal the user is to be told is returned for the
 * caller to reply with; a silent one is ended here.
 */
export async function admitToQuota(quotas: Quotas | undefined, request: RequestRecord, writer: SessionWriter): Promise<QuotaRefusal | null> {
  const refused = (await quotas?.admit(request.userId, request.sessionKey, request.id)) ?? null;
  if (!refused) return null;
  // A program (the HTTP API) has no chat to remember a notice in: it is told every time.
  if (!refused.tell && providerOf(request.sessionKey) === "http") return { ...refused, tell: true };
  if (!refused.tell) await writer.commit({ request: { id: request.id, status: "failed", error: refused.text, errorCode: "quota" } });
  return refused;
}

export async function usageText(quotas: Quotas | undefined, request: RequestRecord): Promise<string> {
  if (!quotas?.enabled) return "There are no daily limits here (USER_DAILY_MESSAGES, USER_DAILY_USD and CHAT_DAILY_USD are not set).";
  return quotas.report(request.userId, request.sessionKey);
}
