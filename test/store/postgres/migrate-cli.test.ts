// `npm run migrate` (src/cli/migrate.ts), run as a deploy would: a child process with DATABASE_URL set (from the
// sources compiled once for the run, as the other child processes of the tests start: test/setup/build.ts).
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, expect, it } from "vitest";
import { SCHEMA_VERSION } from "../../../src/store/postgres/migrations.js";
import { describeIfPostgres, freshDatabase, type FreshDatabase } from "../../helpers/postgres.js";
import { nodeArgs } from "../../integration/child-process.js";

const ROOT = fileURLToPath(new URL("../../..", import.meta.url));

function migrate(databaseUrl: string | undefined): Promise<{ code: number; stdout: string; stderr: string }> {
  const env = { ...process.env };
  delete env.DATABASE_URL;
  if (databaseUrl !== undefined) env.DATABASE_URL = databaseUrl;
  return new Promise((resolve) => {
    execFile(process.execPath, nodeArgs("src/cli/migrate.ts"), { cwd: ROOT, env, timeout: 60_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

describeIfPostgres("npm run migrate", () => {
  let database: FreshDatabase;
  beforeEach(async () => {
    database = await freshDatabase();
  });
  afterEach(async () => {
    await database.drop();
  });

  it("migrates the database, prints its schema version and exits 0, again and again", async () => {
    const first = await migrate(database.url);
    expect(first).toMatchObject({ code: 0, stdout: `database at schema version ${SCHEMA_VERSION}\n` });
    expect(await migrate(database.url)).toMatchObject({ code: 0, stdout: `database at schema version ${SCHEMA_VERSION}\n` });
  });

  it("with a wrong password exits 1 with one line naming the problem and not the password", async () => {
    const url = new URL(database.url);
    url.password = "wrong-password-0451";
    const result = await migrate(url.toString());
    expect(result.code).toBe(1);
    expect(result.stdout).toBe("");
    const line = result.stderr.split("\n").find((l) => l.startsWith("migrate: "));
    expect(line).toMatch(/^migrate: cannot connect to PostgreSQL at postgres:\/\/switchboard@[^ ]+: the password was refused/);
    expect(result.stderr).not.toContain("wrong-password-0451");
  });

  it("without DATABASE_URL exits 1 saying it is not set", async () => {
    const result = await migrate(undefined);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("DATABASE_URL is not set");
  });
});
