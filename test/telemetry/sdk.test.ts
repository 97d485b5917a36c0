// Starting the official SDK: what the startup line says about the collector.
import { expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import { createLogger } from "../../src/log.js";
import { startTracing } from "../../src/telemetry/sdk.js";

it("the startup line names the collector without the credentials in its URL, even with no scrubbing at all", async () => {
  const lines: string[] = [];
  // No secrets given to the logger: the line itself must not hold them.
  const log = createLogger("info", { write: (line: string) => void lines.push(line) }, []);
  const config = loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector-user:collector-pass-31@127.0.0.1:9/otlp" });
  const tracing = await startTracing(config, log);
  try {
    const line = JSON.parse(lines.find((l) => l.includes("tracing on"))!) as { endpoint: string };
    expect(line.endpoint).toBe("http://[redacted]@127.0.0.1:9/otlp");
    expect(lines.join("")).not.toMatch(/collector-user|collector-pass-31/);
  } finally {
    await tracing?.shutdown();
  }
});
