// One hop's destination: scheme, host and every address the host resolves to, decided before any connection.
// The addresses returned are the only ones the transport may connect to (no second DNS lookup).
import { lookup } from "node:dns/promises";
import { blockedReason, parseAddress } from "./addresses.js";
import { allowsAddress, allowsHost, type Allowlist } from "./allowlist.js";

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Resolves a host name to all its addresses; injectable so tests never touch real DNS. */
export type Resolver = (hostname: string) => Promise<ReadonlyArray<{ address: string; family?: number }>>;

export const systemResolver: Resolver = (hostname) => lookup(hostname, { all: true, verbatim: true });

export type Target = { ok: true; hostname: string; addresses: ResolvedAddress[] } | { ok: false; outcome: "refused" | "failed"; reason: string };

const ALLOW_HINT = "an admin can allow it with HTTP_REQUEST_ALLOW";

/** Why `url`'s scheme is refused, or null for http: and https:. */
export function schemeRefusal(url: URL): string | null {
  return url.protocol === "http:" || url.protocol === "https:" ? null : `${url.protocol} URLs are not allowed (only http: and https:)`;
}

/** Checks `url` and resolves its host once. Every address must pass: one private answer refuses the whole name. */
export async function checkTarget(url: URL, allow: Allowlist, resolve: Resolver): Promise<Target> {
  const scheme = schemeRefusal(url);
  if (scheme) return { ok: false, outcome: "refused", reason: scheme };
  if (url.username || url.password) {
    return { ok: false, outcome: "refused", reason: "URLs with a user name or password are not allowed; send credentials in an Authorization header" };
  }
  const hostname = url.hostname.replace(/^\[|\]$/g, "");
  const literal = parseAddress(hostname);
  let answers: ReadonlyArray<{ address: string; family?: number }>;
  if (literal) {
    answers = [{ address: literal.toString() }];
  } else {
    try {
      answers = await resolve(hostname);
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      return { ok: false, outcome: "failed", reason: `cannot resolve ${hostname}${typeof code === "string" ? ` (${code})` : ""}` };
    }
    if (answers.length === 0) return { ok: false, outcome: "failed", reason: `${hostname} has no addresses` };
  }
  const nameAllowed = !literal && allowsHost(allow, hostname);
  const addresses: ResolvedAddress[] = [];
  for (const answer of answers) {
    const parsed = parseAddress(answer.address);
    const where = literal ? answer.address : `${answer.address} (${hostname})`;
    if (!parsed) return { ok: false, outcome: "refused", reason: `${where} is not an IP address` };
    const reason = blockedReason(parsed);
    if (reason !== null && !nameAllowed && !allowsAddress(allow, parsed)) {
      return { ok: false, outcome: "refused", reason: `${where} is ${reason}; ${ALLOW_HINT}` };
    }
    addresses.push({ address: parsed.toString(), family: parsed.kind() === "ipv4" ? 4 : 6 });
  }
  return { ok: true, hostname, addresses };
}
