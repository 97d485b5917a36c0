// A user id always carries where it comes from, so the same number or name from two doors is two people:
// `telegram:4242`, `slack:T1:U1`, `http:alice`, `jwt:<issuer>:<sub>`, `console:<name>`. Owners, approvals,
// budgets and allowlists compare whole ids.

export type IdentitySource = "telegram" | "slack" | "http" | "jwt" | "console";

/** `userId("slack", "T1", "U1")` → `slack:T1:U1`. Parts keep what the platform sent (ids may hold `:` only as JWT issuers do). */
export function userId(source: IdentitySource, ...parts: (string | number)[]): string {
  if (parts.length === 0 || parts.some((p) => String(p) === "")) throw new Error(`userId(${source}) needs non-empty parts`);
  return [source, ...parts.map(String)].join(":");
}
