// vitest globalSetup: one PostgreSQL server for the whole `vitest run`, handed to the test workers via
// provide/inject (see test/helpers/postgres.ts, which gives each test its own fresh database).
//
// Running the PostgreSQL tests locally:
//   - With the PostgreSQL binaries installed (`apt-get install -y postgresql`; initdb found on PATH or in
//     /usr/lib/postgresql/*/bin), there is nothing to do: `npm test` starts a throwaway server with
//     scripts/test-postgres.sh in a temporary directory (about a second) and stops and removes it at the end.
//     Running as root is fine: the server runs as the `postgres` (or `nobody`) system user.
//   - Or point the tests at a server you already have, with a role that owns its database and an admin role
//     that may CREATE DATABASE (each test gets a database of its own, dropped after it):
//       TEST_DATABASE_URL=postgres://switchboard:pw@127.0.0.1:5432/switchboard \
//       TEST_DATABASE_ADMIN_URL=postgres://postgres:pw@127.0.0.1:5432/postgres npm test
//   - `scripts/test-postgres.sh start /tmp/pg` prints both variables for a server you keep between runs;
//     `scripts/test-postgres.sh stop /tmp/pg` ends it.
// Without PostgreSQL the PostgreSQL tests are skipped with one message; with CI set, they fail instead.
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import type { TestProject } from "vitest/node";

/** What the workers receive: the server's URLs, or why there is none. */
export type PostgresTestServer = { url: string; adminUrl: string } | { unavailable: string };

declare module "vitest" {
  export interface ProvidedContext {
    postgres: PostgresTestServer;
  }
}

const run = promisify(execFile);
const SCRIPT = fileURLToPath(new URL("../../scripts/test-postgres.sh", import.meta.url));
const HOW = "install PostgreSQL (apt-get install -y postgresql) or set TEST_DATABASE_URL and TEST_DATABASE_ADMIN_URL (see test/setup/postgres.ts)";

export default async function setup(project: TestProject): Promise<(() => Promise<void>) | undefined> {
  const url = process.env.TEST_DATABASE_URL;
  const adminUrl = process.env.TEST_DATABASE_ADMIN_URL;
  if (url && adminUrl) {
    project.provide("postgres", { url, adminUrl });
    return undefined;
  }
  if (url || adminUrl) return unavailable(project, "only one of TEST_DATABASE_URL and TEST_DATABASE_ADMIN_URL is set; the tests need both");

  const dir = mkdtempSync(join(tmpdir(), "switchboard-pg-"));
  const stop = async () => {
    await run("bash", [SCRIPT, "stop", dir]).catch(() => rmSync(dir, { recursive: true, force: true }));
  };
  try {
    const { stdout } = await run("bash", [SCRIPT, "start", dir], { timeout: 120_000 });
    const started = Object.fromEntries(
      stdout
        .split("\n")
        .map((line) => line.match(/^(TEST_DATABASE_(?:ADMIN_)?URL)=(.+)$/))
        .filter((m): m is RegExpMatchArray => m !== null)
        .map((m) => [m[1], m[2]]),
    );
    if (!started.TEST_DATABASE_URL || !started.TEST_DATABASE_ADMIN_URL) throw new Error(`the script printed no URLs (${stdout.trim() || "nothing"})`);
    project.provide("postgres", { url: started.TEST_DATABASE_URL, adminUrl: started.TEST_DATABASE_ADMIN_URL });
    return stop;
  } catch (error) {
    await stop();
    const e = error as { stderr?: string; message?: string };
    const reason = (e.stderr?.trim().split("\n").pop() ?? "") || e.message || String(error);
    return unavailable(project, `could not start a throwaway PostgreSQL server: ${reason.replace(/^test-postgres: /, "")}`);
  }
}

function unavailable(project: TestProject, reason: string): undefined {
  const ci = process.env.CI;
  if (ci && ci !== "false" && ci !== "0") throw new Error(`PostgreSQL tests cannot run: ${reason}. In CI they must: ${HOW}.`);
  process.stderr.write(`\n⚠ PostgreSQL tests skipped: ${reason}.\n  To run them: ${HOW}.\n\n`);
  project.provide("postgres", { unavailable: reason });
  return undefined;
}
