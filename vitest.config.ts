import { availableParallelism } from "node:os";
import { configDefaults, defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    testTimeout: 30_000,
    // vitest's default is one worker fewer than the cores: one file at a time on a 2-core machine, while most files
    // spend their time waiting on child processes, servers and sockets. Two files at a time there (one per core
    // elsewhere); forks, not threads, since some files change the working directory.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    hookTimeout: 30_000,
    // The run ends with its wall time and the slowest files (test/setup/timing-reporter.ts).
    reporters: ["default", "./test/setup/timing-reporter.ts"],
    projects: [
      {
        extends: true,
        test: {
          name: "main",
          include: ["test/**/*.test.ts"],
          exclude: [...configDefaults.exclude, "test/store/**", "test/replicas/**"],
          // Says once whether the sandbox tests can run here (and fails in CI when they cannot).
          // Compiles the sources once for the tests that start Switchboard as a child process (test/setup/build.ts).
          globalSetup: ["test/setup/sandbox.ts", "test/setup/build.ts"],
        },
      },
      {
        // The tests that need PostgreSQL (the store contract, the replicas): vitest runs a project's globalSetup only
        // when one of its tests is selected, so only such a run starts the throwaway server (test/setup/postgres.ts).
        extends: true,
        test: { name: "store", include: ["test/store/**/*.test.ts", "test/replicas/**/*.test.ts"], globalSetup: ["test/setup/postgres.ts"] },
      },
    ],
  },
});
