import { diag, DiagLogLevel, trace, type Tracer } from "@opentelemetry/api";
import type { Logger } from "pino";
import type { Config } from "../config.js";
import { withoutCredentials } from "../secrets.js";

export interface Tracing {
  tracer: Tracer;
  /** Sends what is still buffered and stops exporting. */
  shutdown(): Promise<void>;
}

/**
 * Starts the official OpenTelemetry Node SDK when an OTLP endpoint is configured (OTEL_EXPORTER_OTLP_ENDPOINT or
 * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT); null otherwise, and then nothing of it is even loaded. The SDK reads the
 * usual OTEL_* variables itself (protocol, headers, timeout, compression, sampler, resource attributes, batch
 * sizes). Traces only: metrics are Prometheus (GET /metrics), logs are pino's.
 */
export async function startTracing(config: Config, log: Logger): Promise<Tracing | null> {
  const endpoint = config.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? config.OTEL_EXPORTER_OTLP_ENDPOINT;
  if (!endpoint) return null;
  // The SDK's own problems (a collector that cannot be reached) reach the log, unless OTEL_LOG_LEVEL asks for its console logger.
  if (!process.env.OTEL_LOG_LEVEL) {
    const otel = log.child({ part: "opentelemetry" });
    diag.setLogger(
      {
        error: (message, ...args) => otel.warn({ args }, message),
        warn: (message, ...args) => otel.warn({ args }, message),
        info: (message) => otel.debug(message),
        debug: (message) => otel.trace(message),
        verbose: (message) => otel.trace(message),
      },
      DiagLogLevel.WARN,
    );
  }
  const { NodeSDK } = await import("@opentelemetry/sdk-node");
  const sdk = new NodeSDK({ serviceName: config.OTEL_SERVICE_NAME, metricReaders: [], logRecordProcessors: [], instrumentations: [] });
  sdk.start();
  // A collector's basic-auth credentials may sit in the URL: the log names the collector, never them.
  log.info(
    { endpoint: withoutCredentials(endpoint), protocol: config.OTEL_EXPORTER_OTLP_PROTOCOL ?? "http/protobuf", service: config.OTEL_SERVICE_NAME },
    "tracing on: exporting spans over OTLP",
  );
  return {
    tracer: trace.getTracer("switchboard"),
    shutdown: () => sdk.shutdown(),
  };
}
