import { createHash, timingSafeEqual } from "node:crypto";
import { createRemoteJWKSet, jwtVerify, type JWTVerifyGetKey } from "jose";
import { userId } from "../../src/gateway/identity.js";

export interface AuthOptions {
  /** Static bearer tokens and the user name each stands for (the user id is `http:<name>`). */
  tokens: ReadonlyMap<string, string> | Record<string, string>;
  /** Both audience and issuer are required: a JWKS alone would accept tokens minted for any other service. */
  jwt?: { jwksUrl: string; audience: string; issuer: string; userClaims: string[] } | undefined;
  /** For tests: the key set to verify JWTs with, instead of fetching jwksUrl. */
  keySet?: JWTVerifyGetKey;
}

export type AuthResult = { ok: true; userId: string } | { ok: false; reason: string };

const digest = (value: string) => createHash("sha256").update(value, "utf8").digest();

/**
 * `Authorization: Bearer <token>`: a configured token (user `http:<name>`), or a JWT signed by the JWKS
 * (user `jwt:<issuer>:<claim>`), so a JWT subject can never pose as a static-token user or a chat user.
 */
export class Authenticator {
  private readonly keys: JWTVerifyGetKey | null;
  /** Digests of the tokens: compared in constant time, and a token like `constructor` is just a miss. */
  private readonly tokens: Array<{ digest: Buffer; user: string }>;

  constructor(private readonly options: AuthOptions) {
    this.keys = options.keySet ?? (options.jwt ? createRemoteJWKSet(new URL(options.jwt.jwksUrl)) : null);
    const entries = options.tokens instanceof Map ? [...options.tokens] : Object.entries(options.tokens);
    this.tokens = entries.map(([token, user]) => ({ digest: digest(token), user }));
  }

  async check(header: string | undefined): Promise<AuthResult> {
    const match = /^Bearer\s+(\S+)$/i.exec(header ?? "");
    if (!match) return { ok: false, reason: "missing bearer token: send Authorization: Bearer <token>" };
    const token = match[1]!;
    const user = this.staticUser(token);
    if (user !== null) return { ok: true, userId: userId("http", user) };
    if (!this.keys || !this.options.jwt || token.split(".").length !== 3) return { ok: false, reason: "invalid token" };
    const { audience, issuer, userClaims } = this.options.jwt;
    try {
      const { payload } = await jwtVerify(token, this.keys, { audience, issuer });
      for (const claim of userClaims) {
        const value = payload[claim];
        if (typeof value === "string" && value !== "") return { ok: true, userId: userId("jwt", payload.iss ?? issuer, value) };
      }
      return { ok: false, reason: `the token has none of the claims ${userClaims.join(", ")}` };
    } catch (error) {
      return { ok: false, reason: `invalid token: ${error instanceof Error ? error.message : String(error)}` };
    }
  }

  /** Every configured token is compared, whether or not an earlier one matched, so timing tells nothing. */
  private staticUser(token: string): string | null {
    const presented = digest(token);
    let found: string | null = null;
    for (const entry of this.tokens) {
      if (timingSafeEqual(entry.digest, presented) && found === null) found = entry.user;
    }
    return found;
  }
}
