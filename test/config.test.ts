// An entry point's defaults and the environment: a variable set to nothing (`LOG_LEVEL=` copied from .env.example)
// is unset, so it does not beat the default (`npm run chat` logs errors only unless LOG_LEVEL says otherwise).
import { describe, expect, it } from "vitest";
import { loadConfig, withDefaults } from "../src/config.js";

describe("withDefaults", () => {
  it("keeps a default when the variable is empty or blank", () => {
    expect(loadConfig(withDefaults({ LOG_LEVEL: "error" }, { LOG_LEVEL: "" })).LOG_LEVEL).toBe("error");
    expect(loadConfig(withDefaults({ LOG_LEVEL: "error" }, { LOG_LEVEL: "  " })).LOG_LEVEL).toBe("error");
  });

  it("lets a variable that is set win over the default", () => {
    expect(loadConfig(withDefaults({ LOG_LEVEL: "error" }, { LOG_LEVEL: "debug" })).LOG_LEVEL).toBe("debug");
  });

  it("leaves variables without a default alone, and an empty one is unset as before", () => {
    const env = withDefaults({ LOG_LEVEL: "error" }, { DATA_DIR: "/srv/sb", LOG_FORMAT: "", HTTP_PORT: undefined });
    expect(env).toEqual({ LOG_LEVEL: "error", DATA_DIR: "/srv/sb" });
    const config = loadConfig(env);
    expect(config.DATA_DIR).toBe("/srv/sb");
    expect(config.LOG_FORMAT).toBeUndefined();
    expect(config.HTTP_PORT).toBe(8787);
  });

  it("without defaults, an empty LOG_LEVEL means the schema's default", () => {
    expect(loadConfig(withDefaults({}, { LOG_LEVEL: "" })).LOG_LEVEL).toBe("info");
  });
});
