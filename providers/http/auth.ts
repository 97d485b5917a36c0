import { createRemoteJWKSet, jwtVerify, type JWTVerifyGetKey } from "jose";
import { userId } from "../../src/gateway/index.js";
import { TokenSet } from "../../src/secret-tokens.js";

export interface AuthOptions {
  /** Static bearer tokens and the user name each stands for (the user id is `http:<name>`). */
  tokens: ReadonlyMap<string, string> | Record<string, string>;
  /** Both audience and issuer are required: a JWKS alone would accept tokens minted for any other service. */
  jwt?: { jwksUrl: string; audience: string; issuer: string; userClaims: string[] } | undefined;
  /** For tests: the key set to verify JWTs with, instead of fetching jwksUrl. */
  keySet?: JWTVerifyGetKey;
}

/** What every request hears while the server accepts no token at all. */
export const NOT_CONFIGURED =
  "this server accepts no API tokens yet: whoever runs it sets HTTP_API_TOKENS (token:user pairs), or HTTP_JWT_JWKS_URL with HTTP_JWT_AUDIENCE and HTTP_JWT_ISSUER, and restarts it";

export type AuthResult = { ok: true; userId: string } | { ok: false; reason: string };

/**
 * `Authorization: Bearer <token>`: a configured token (user `http:<name>`), or a JWT signed by the JWKS
 * (user `jwt:<issuer>:<claim>`), so a JWT subject can never pose as a static-token user or a chat user.
 */
export class Authenticator {
  private readonly keys: JWTVerifyGetKey | null;
  /** Compared in constant time, and a token like `constructor` is just a miss. */
  private readonly tokens: TokenSet<string>;

  constructor(private readonly options: AuthOptions) {
    this.keys = options.keySet ?? (options.jwt ? createRemoteJWKSet(new URL(options.jwt.jwksUrl)) : null);
    const entries = options.tokens instanceof Map ? [...options.tokens] : Object.entries(options.tokens);
    this.tokens = new TokenSet(entries);
  }

  /** Whether any token can be accepted at all (HTTP_API_TOKENS or the JWT settings). */
  get configured(): boolean {
    return this.tokens.size > 0 || this.keys !== null;
  }

  async check(header: string | undefined): Promise<AuthResult> {
    if (!this.configured) return { ok: false, reason: NOT_CONFIGURED };
    const token = TokenSet.bearer(header);
    if (token === null) return { ok: false, reason: "missing bearer token: send Authorization: Bearer <token>" };
    const user = this.tokens.match(token);
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
}
