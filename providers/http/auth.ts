import { createRemoteJWKSet, jwtVerify, type JWTVerifyGetKey } from "jose";

export interface AuthOptions {
  /** Static bearer tokens and the user id each stands for. */
  tokens: Record<string, string>;
  jwt?: { jwksUrl: string; audience?: string | undefined; issuer?: string | undefined; userClaims: string[] } | undefined;
  /** For tests: the key set to verify JWTs with, instead of fetching jwksUrl. */
  keySet?: JWTVerifyGetKey;
}

export type AuthResult = { ok: true; userId: string } | { ok: false; reason: string };

/** `Authorization: Bearer <token>`: a configured token, or a JWT signed by the JWKS (user id from a claim). */
export class Authenticator {
  private readonly keys: JWTVerifyGetKey | null;

  constructor(private readonly options: AuthOptions) {
    this.keys = options.keySet ?? (options.jwt ? createRemoteJWKSet(new URL(options.jwt.jwksUrl)) : null);
  }

  async check(header: string | undefined): Promise<AuthResult> {
    const match = /^Bearer\s+(\S+)$/i.exec(header ?? "");
    if (!match) return { ok: false, reason: "missing bearer token: send Authorization: Bearer <token>" };
    const token = match[1]!;
    const user = this.options.tokens[token];
    if (user) return { ok: true, userId: user };
    if (!this.keys || !this.options.jwt || token.split(".").length !== 3) return { ok: false, reason: "invalid token" };
    try {
      const { payload } = await jwtVerify(token, this.keys, {
        ...(this.options.jwt.audience ? { audience: this.options.jwt.audience } : {}),
        ...(this.options.jwt.issuer ? { issuer: this.options.jwt.issuer } : {}),
      });
      for (const claim of this.options.jwt.userClaims) {
        const value = payload[claim];
        if (typeof value === "string" && value !== "") return { ok: true, userId: value };
      }
      return { ok: false, reason: `the token has none of the claims ${this.options.jwt.userClaims.join(", ")}` };
    } catch (error) {
      return { ok: false, reason: `invalid token: ${error instanceof Error ? error.message : String(error)}` };
    }
  }
}
