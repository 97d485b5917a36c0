import { clean } from "../admin/text.js";
import type { Store } from "../store/store.js";

/** How many of the most recently active sessions a prefix is matched against. */
export const PREFIX_SCAN = 10_000;
/** How many candidates an ambiguous prefix lists. */
const SHOWN = 5;

export type SessionMatch = { ok: true; key: string; byPrefix: boolean } | { ok: false; problem: string };

/**
 * The session an operator means: the key as typed, or the one session whose key starts with it (keys are long:
 * `slack:T0123ABCD:C0456EFGH:thread:1718000000.000100`). Several or none is a problem that says what to type.
 */
export async function findSessionKey(store: Pick<Store, "operations" | "sessions">, typed: string): Promise<SessionMatch> {
  if (await store.sessions.find(typed)) return { ok: true, key: typed, byPrefix: false };
  const keys = (await store.operations.recentSessions(PREFIX_SCAN)).map((s) => s.key).filter((key) => key.startsWith(typed));
  if (keys.length === 1) return { ok: true, key: keys[0]!, byPrefix: true };
  const shown = clean(typed);
  if (keys.length === 0) return { ok: false, problem: `no session "${shown}" and none whose key starts with it (npm run admin -- sessions lists them)` };
  const listed = keys.slice(0, SHOWN).map(clean).join(", ");
  return { ok: false, problem: `"${shown}" is the start of ${keys.length} session keys (${listed}${keys.length > SHOWN ? ", …" : ""}); type more of the key` };
}
