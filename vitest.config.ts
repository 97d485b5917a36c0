import { availableParallelism } from "node:os";
import { configDefaults, defineConfig } from "vitest/config";

/**
 * The test files that change what the whole process shares — a module mocked with vi.mock, the working directory,
 * process.env, spies on node:net or the console, OpenTelemetry's global providers, the clock — and so run each in a
 * fresh module graph of their own. Every other file shares its worker's modules with the files before it
 * (`isolate: false`): importing the SDKs, sharp and the sources once per worker instead of once per file is the
 * largest part of the suite's time (docs/engineering/simulation.md, "How long the tests take").
 */
const ISOLATED = [
  "test/catalog/lock.test.ts", // vi.mock("node:fs"); process.chdir
  "test/security/read-skill-file-race.test.ts", // vi.mock("node:fs/promises")
  "test/catalog/fixtures.test.ts", // process.chdir
  "test/catalog/real-shapes.test.ts", // process.chdir
  "test/sandbox/sandbox.test.ts", // process.env
  "test/security/egress.test.ts", // spies on net.connect, tls.connect and fetch for the whole file
  "test/telemetry/sdk.test.ts", // NodeSDK.start() sets OpenTelemetry's global tracer provider and context manager
  "test/providers/slack/socket-mode.test.ts", // asserts that nothing reaches the process's console
  "test/security/telegram-polling.test.ts", // asserts on the process's console
  "test/config.test.ts", // vi.useFakeTimers
  "test/security/hostile-schemas.test.ts", // bounds the event loop's longest stall: a heap grown by earlier files adds GC pauses
];

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
          exclude: [...configDefaults.exclude, "test/store/**", "test/replicas/**", ...ISOLATED],
          isolate: false,
          // Says once whether the sandbox tests can run here (and fails in CI when they cannot).
          // Compiles the sources once for the tests that start Switchboard as a child process (test/setup/build.ts).
          globalSetup: ["test/setup/sandbox.ts", "test/setup/build.ts"],
        },
      },
      {
        extends: true,
        // The same set-up as main's; the compiled copy is made once and shared (test/setup/build.ts).
        test: { name: "isolated", include: ISOLATED, globalSetup: ["test/setup/sandbox.ts", "test/setup/build.ts"] },
      },
      {
        // The tests that need PostgreSQL (the store contract, the replicas): vitest runs a project's globalSetup only
        // when one of its tests is selected, so only such a run starts the throwaway server (test/setup/postgres.ts).
        // Its files share their worker's modules as main's do; the replicas and `npm run migrate` start from the
        // compiled copy (test/setup/build.ts).
        extends: true,
        test: {
          name: "store",
          include: ["test/store/**/*.test.ts", "test/replicas/**/*.test.ts"],
          isolate: false,
          globalSetup: ["test/setup/postgres.ts", "test/setup/build.ts"],
        },
      },
    ],
  },
});
