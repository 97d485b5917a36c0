import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const ROOT = new URL("../", import.meta.url).pathname;

/**
 * A PostgreSQL database for the PostgreSQL scenarios: BENCH_DATABASE_URL when set (an empty database you own),
 * else a throwaway local server started with scripts/test-postgres.sh (needs the PostgreSQL binaries), or null.
 */
export function benchDatabase(): { url: string; stop(): void; serverCpuMs(): number | null } | { skipped: string } {
  if (process.env.BENCH_DATABASE_URL) {
    // BENCH_POSTGRES_DATA: that server's data directory, when it runs on this machine (its CPU is then reported too).
    const data = process.env.BENCH_POSTGRES_DATA;
    return { url: process.env.BENCH_DATABASE_URL, stop: () => {}, serverCpuMs: () => (data ? serverCpuMs(data) : null) };
  }
  const dir = mkdtempSync(join(tmpdir(), "switchboard-bench-pg-"));
  try {
    const out = execFileSync("bash", [join(ROOT, "scripts/test-postgres.sh"), "start", dir], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
    const url = /^TEST_DATABASE_URL=(.+)$/m.exec(out)?.[1];
    if (!url) throw new Error("no URL printed");
    return {
      url,
      stop: () => execFileSync("bash", [join(ROOT, "scripts/test-postgres.sh"), "stop", dir], { stdio: "ignore" }),
      serverCpuMs: () => serverCpuMs(join(dir, "data")),
    };
  } catch (error) {
    return { skipped: `no PostgreSQL (set BENCH_DATABASE_URL or install the binaries): ${error instanceof Error ? error.message.split("\n")[0] : String(error)}` };
  }
}

/** Clock ticks per second of /proc's CPU times (`getconf CLK_TCK`: 100 on every Linux this runs on). */
const TICKS_PER_S = 100;

/**
 * The CPU time (user + system, ms) the local server's processes have used so far: the postmaster named in the data
 * directory's postmaster.pid and its children (the backends serving the bench's connections, the WAL writer …).
 * Read from /proc, so Linux only; null where that can't be read. A backend that exited takes its time with it, so
 * read this before the pool closes.
 */
function serverCpuMs(dataDir: string): number | null {
  try {
    const postmaster = Number(readFileSync(join(dataDir, "postmaster.pid"), "utf8").split("\n")[0]);
    let ticks = 0;
    for (const entry of readdirSync("/proc")) {
      if (!/^\d+$/.test(entry)) continue;
      let stat: string;
      try {
        stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      } catch {
        continue; // exited meanwhile
      }
      // The command name (field 2) may hold spaces and parentheses: the fields after it start after the last ")".
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      const pid = Number(entry);
      const ppid = Number(fields[1]);
      if (pid === postmaster || ppid === postmaster) ticks += Number(fields[11]) + Number(fields[12]);
    }
    return (ticks * 1000) / TICKS_PER_S;
  } catch {
    return null;
  }
}
