import { execFileSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const ROOT = new URL("../", import.meta.url).pathname;

/**
 * A PostgreSQL database for the PostgreSQL scenarios: BENCH_DATABASE_URL when set (an empty database you own),
 * else a throwaway local server started with scripts/test-postgres.sh (needs the PostgreSQL binaries), or null.
 */
export function benchDatabase(): { url: string; stop(): void } | { skipped: string } {
  if (process.env.BENCH_DATABASE_URL) return { url: process.env.BENCH_DATABASE_URL, stop: () => {} };
  const dir = mkdtempSync(join(tmpdir(), "switchboard-bench-pg-"));
  try {
    const out = execFileSync("bash", [join(ROOT, "scripts/test-postgres.sh"), "start", dir], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
    const url = /^TEST_DATABASE_URL=(.+)$/m.exec(out)?.[1];
    if (!url) throw new Error("no URL printed");
    return { url, stop: () => execFileSync("bash", [join(ROOT, "scripts/test-postgres.sh"), "stop", dir], { stdio: "ignore" }) };
  } catch (error) {
    return { skipped: `no PostgreSQL (set BENCH_DATABASE_URL or install the binaries): ${error instanceof Error ? error.message.split("\n")[0] : String(error)}` };
  }
}
