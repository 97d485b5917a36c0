// The file retention (FILE_RETENTION_DAYS) as Prometheus counters: files whose bytes were deleted, and the bytes.
import { Counter } from "prom-client";
import type { RetentionObserver } from "../files/retention.js";
import type { Metrics } from "./metrics.js";

export function retentionMetrics(metrics: Metrics): RetentionObserver {
  const files = new Counter({
    name: "switchboard_files_expired_total",
    help: "Stored files whose bytes were deleted as older than FILE_RETENTION_DAYS (their descriptions stay).",
    registers: [metrics.registry],
  });
  const bytes = new Counter({
    name: "switchboard_file_bytes_expired_total",
    help: "Bytes of stored files deleted as older than FILE_RETENTION_DAYS.",
    registers: [metrics.registry],
  });
  return {
    expired: (done) => {
      files.inc(done.files);
      bytes.inc(done.bytes);
    },
  };
}
