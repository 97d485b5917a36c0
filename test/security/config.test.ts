// Startup refuses settings that would open a door: a JWKS with no audience or issuer to pin tokens to.
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../src/config.js";

describe("JWT settings", () => {
  it.each([
    [{}, ["HTTP_JWT_AUDIENCE", "HTTP_JWT_ISSUER"]],
    [{ HTTP_JWT_AUDIENCE: "switchboard" }, ["HTTP_JWT_ISSUER"]],
    [{ HTTP_JWT_ISSUER: "https://idp.example" }, ["HTTP_JWT_AUDIENCE"]],
  ])("a JWKS without audience or issuer is refused at startup, naming what to set (%o)", (extra, missing) => {
    const load = () => loadConfig({ HTTP_JWT_JWKS_URL: "https://idp.example/jwks.json", ...extra });
    expect(load).toThrow(ConfigError);
    const message = (() => {
      try {
        load();
        return "";
      } catch (error) {
        return (error as Error).message;
      }
    })();
    for (const name of missing) expect(message).toContain(`${name}: HTTP_JWT_JWKS_URL is set: also set ${name}`);
    for (const name of ["HTTP_JWT_AUDIENCE", "HTTP_JWT_ISSUER"].filter((n) => !missing.includes(n))) expect(message).not.toContain(`${name}:`);
  });

  it("starts with both", () => {
    const config = loadConfig({ HTTP_JWT_JWKS_URL: "https://idp.example/jwks.json", HTTP_JWT_AUDIENCE: "switchboard", HTTP_JWT_ISSUER: "https://idp.example" });
    expect(config.HTTP_JWT_ISSUER).toBe("https://idp.example");
  });
});
