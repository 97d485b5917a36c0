// The sandbox with real bubblewrap: what a command can and cannot see, reach and use up. Each test runs in a
// gateway-shaped site (a database file, DATA_DIR, two sessions' workspaces, a project folder with .env).
// Timeouts that a test is about are fired by hand once the command has shown it is running.
import { existsSync, mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:net";
import { networkInterfaces } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import type { SandboxResult } from "../../src/sandbox/types.js";
import { manualTimeouts } from "../helpers/timers.js";
import { describeSandbox, makeSite, outputWatcher, probe, processesWith, testSandbox, type Site } from "../helpers/sandbox.js";

const user = probe.ok ? probe.setup.user : null;
let site: Site;
beforeEach(() => {
  site = makeSite(user);
});
afterEach(() => site.remove());

const bash = (command: string) => ["bash", "-c", command];
const exited = (r: SandboxResult) => {
  if (r.status !== "exited") throw new Error(`expected the command to exit, got ${JSON.stringify(r)}`);
  return r;
};

describeSandbox("what a sandboxed command sees", () => {
  it("starts in the workspace, and what it writes there stays in the session's folder", async () => {
    const sandbox = testSandbox(site.hidden);
    const r = exited(await sandbox.run({ key: "alice", argv: bash("pwd && echo hello > note.txt && cat note.txt"), workspace: site.alice, timeoutMs: 30_000 }));
    expect(r.exitCode).toBe(0);
    expect(r.output.stdout).toBe("/workspace\nhello\n");
    expect(readFileSync(join(site.alice, "note.txt"), "utf8")).toBe("hello\n");
  });

  it("gets only the environment the sandbox builds: none of the gateway's variables or secrets", async () => {
    process.env.SWITCHBOARD_TEST_SECRET = "sk-test-never-inside";
    process.env.ANTHROPIC_API_KEY = "sk-ant-fake-key-for-the-test";
    try {
      const sandbox = testSandbox(site.hidden);
      const r = exited(await sandbox.run({ key: "alice", argv: bash("env; tr '\\0' '\\n' < /proc/1/environ"), workspace: site.alice, timeoutMs: 30_000 }));
      const names = r.output.stdout
        .split("\n")
        .filter((l) => l.includes("="))
        .map((l) => l.slice(0, l.indexOf("=")));
      expect(new Set(names)).toEqual(new Set(["HOME", "LANG", "LOGNAME", "PATH", "PWD", "SHELL", "SHLVL", "TMPDIR", "USER", "_"]));
      expect(r.output.stdout).not.toContain("sk-test-never-inside");
      expect(r.output.stdout).not.toContain("sk-ant-fake-key");
    } finally {
      delete process.env.SWITCHBOARD_TEST_SECRET;
      delete process.env.ANTHROPIC_API_KEY;
    }
  });

  it("starts with stdin, stdout and stderr only: no descriptor of the gateway reaches it", async () => {
    const sandbox = testSandbox(site.hidden);
    // ls opens the folder it lists (3); nothing else may be open.
    const r = exited(await sandbox.run({ key: "alice", argv: bash("ls /proc/self/fd"), workspace: site.alice, timeoutMs: 30_000 }));
    expect(r.output.stdout.split("\n").filter(Boolean).sort()).toEqual(["0", "1", "2", "3"]);
  });

  it("cannot read the database, DATA_DIR, .env or the project folder", async () => {
    const sandbox = testSandbox(site.hidden);
    const r = exited(
      await sandbox.run({
        key: "alice",
        argv: bash(`cat ${site.database}; ls ${site.data}; cat ${site.dotenv}; ls -a ${site.project}; ls /; echo done`),
        workspace: site.alice,
        timeoutMs: 30_000,
      }),
    );
    expect(r.output.stdout).not.toContain("SQLite");
    expect(r.output.stdout).not.toContain("sk-ant-site-secret");
    expect(r.output.stdout).toMatch(/done\n$/);
    expect(r.output.stderr).toContain(`cat: ${site.database}: No such file or directory`);
    expect(r.output.stderr).toContain(`cat: ${site.dotenv}: No such file or directory`);
    expect(r.output.stderr).toContain(`ls: cannot access '${site.project}': No such file or directory`);
    // The root holds the system's folders, scratch space and the workspace; none of the host's own folders.
    const top = r.output.stdout
      .replace(/done\n$/, "")
      .split("\n")
      .filter(Boolean);
    expect(top).toEqual(expect.arrayContaining(["dev", "etc", "home", "proc", "tmp", "usr", "workspace"]));
    for (const hostOnly of ["var", "root", "srv", "opt", "mnt", "boot", "media", "work"]) expect(top).not.toContain(hostOnly);
  });

  it("cannot see another session's workspace", async () => {
    const sandbox = testSandbox(site.hidden);
    const r = exited(
      await sandbox.run({
        key: "alice",
        argv: bash(`cat ${join(site.bob, "diary.txt")}; cat ../bob/diary.txt; ls ${join(site.data, "workspaces")}; ls /workspace/..`),
        workspace: site.alice,
        timeoutMs: 30_000,
      }),
    );
    expect(r.output.stdout).not.toContain("diary");
    expect(r.output.stderr).toContain("No such file or directory");
  });

  it("finds nothing behind a symlink in the workspace that points at a host path", async () => {
    symlinkSync(site.database, join(site.alice, "db"));
    symlinkSync(site.bob, join(site.alice, "bob"));
    const sandbox = testSandbox(site.hidden);
    const r = exited(await sandbox.run({ key: "alice", argv: bash("cat db; ls bob/; echo hi > bob/x; echo end"), workspace: site.alice, timeoutMs: 30_000 }));
    expect(r.output.stdout).toBe("end\n");
    expect(r.output.stderr).toContain("cat: db: No such file or directory");
    expect(existsSync(join(site.bob, "x"))).toBe(false);
  });

  it("cannot write anywhere but the workspace and its scratch folders", async () => {
    const sandbox = testSandbox(site.hidden);
    const targets = ["/etc/x", "/usr/x", "/x", "/dev/x", join(site.project, "x"), join(site.bob, "x"), "/workspace/../x"];
    const r = exited(
      await sandbox.run({
        key: "alice",
        argv: bash(`${targets.map((t) => `touch ${t} 2>&1 | sed 's/^/refused: /'`).join("; ")}; touch /tmp/ok /home/sandbox/ok /dev/shm/ok && echo scratch-ok`),
        workspace: site.alice,
        timeoutMs: 30_000,
      }),
    );
    expect(r.output.stdout.match(/^refused: /gm)).toHaveLength(targets.length);
    expect(r.output.stdout).toContain("scratch-ok");
    expect(existsSync(join(site.project, "x"))).toBe(false);
    expect(existsSync(join(site.bob, "x"))).toBe(false);
  });

  it("shows a read-only folder (a skill's) where it is asked for, and refuses writes to it", async () => {
    const skill = join(site.project, "skills", "pdf");
    mkdirSync(join(skill, "scripts"), { recursive: true });
    writeFileSync(join(skill, "scripts", "hello.py"), "print('hello from the skill')\n");
    const sandbox = testSandbox(site.hidden);
    const r = exited(
      await sandbox.run({
        key: "alice",
        argv: bash("python3 /skills/pdf/scripts/hello.py; touch /skills/pdf/x 2>&1"),
        workspace: site.alice,
        readOnly: [{ dir: skill, path: "/skills/pdf" }],
        timeoutMs: 30_000,
      }),
    );
    expect(r.output.stdout).toContain("hello from the skill");
    expect(r.output.stdout).toContain("Read-only file system");
    expect(existsSync(join(skill, "x"))).toBe(false);
  });

  it("covers a path to keep hidden that lies inside a folder it shows", async () => {
    const skill = join(site.project, "skills", "pdf");
    mkdirSync(join(skill, "private"), { recursive: true });
    writeFileSync(join(skill, "private", "key.pem"), "-----BEGIN PRIVATE KEY-----");
    writeFileSync(join(skill, "token.txt"), "sk-skill-token");
    writeFileSync(join(skill, "README.md"), "the skill's readme");
    const sandbox = testSandbox([...site.hidden, join(skill, "private"), join(skill, "token.txt")]);
    const r = exited(
      await sandbox.run({
        key: "alice",
        argv: bash("cat /skills/pdf/README.md; echo; ls -A /skills/pdf/private; cat /skills/pdf/private/key.pem /skills/pdf/token.txt; echo end"),
        workspace: site.alice,
        readOnly: [{ dir: skill, path: "/skills/pdf" }],
        timeoutMs: 30_000,
      }),
    );
    expect(r.output.stdout).toBe("the skill's readme\nend\n");
    expect(r.output.stderr).toContain("cat: /skills/pdf/private/key.pem: No such file or directory");
  });

  it("shows only the parts of /etc programs need: no shadow file, no SSH keys, no service configs", async () => {
    const sandbox = testSandbox(site.hidden);
    const r = exited(await sandbox.run({ key: "alice", argv: bash("ls -A /etc"), workspace: site.alice, timeoutMs: 30_000 }));
    const entries = r.output.stdout.split("\n").filter(Boolean);
    expect(entries).toEqual(expect.arrayContaining(["passwd", "group", "ld.so.cache"]));
    for (const secret of ["shadow", "gshadow", "ssh", "sudoers", "environment", "crontab"]) expect(entries).not.toContain(secret);
  });

  it("refuses a read-only folder that would cover the sandbox's own layout", async () => {
    const sandbox = testSandbox(site.hidden);
    for (const path of ["/usr/lib", "/workspace", "/", "/tmp/x", "/skills/../etc"]) {
      const r = await sandbox.run({ key: "alice", argv: ["true"], workspace: site.alice, readOnly: [{ dir: site.project, path }], timeoutMs: 1000 });
      expect(r.status, path).toBe("failed");
    }
  });
});

describeSandbox("no network", () => {
  let server: Server;
  let connections = 0;
  beforeEach(async () => {
    connections = 0;
    server = createServer((socket) => {
      connections++;
      socket.end("hello from the host\n");
    });
    await new Promise<void>((resolve) => server.listen(0, "0.0.0.0", resolve));
  });
  afterEach(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it("a listener on the host's loopback (or any of its addresses) gets no connection", async () => {
    const port = (server.address() as { port: number }).port;
    const hostAddresses = Object.values(networkInterfaces())
      .flat()
      .filter((a) => a && a.family === "IPv4")
      .map((a) => a!.address);
    const attempts = ["127.0.0.1", ...hostAddresses].map((a) => `(exec 3<>/dev/tcp/${a}/${port}) 2>&1 | sed 's/^/${a}: /'`);
    const sandbox = testSandbox(site.hidden);
    const r = exited(
      await sandbox.run({ key: "alice", argv: bash(`${attempts.join("; ")}; getent hosts example.com || echo no-dns`), workspace: site.alice, timeoutMs: 30_000 }),
    );
    expect(r.output.stdout).toMatch(/127\.0\.0\.1: .*Connection refused/);
    expect(r.output.stdout).toContain("no-dns");
    expect(r.output.stdout).not.toContain("hello from the host");
    expect(connections).toBe(0);
  });
});

// Says "started" only once both background processes ($a, and the one whose pid is in /tmp/b) run `sleep`.
const bothSleeping = `b=$(< /tmp/b); is_sleep() { local c; read -r -d '' c < /proc/$1/cmdline; [ "$c" = sleep ]; }; until is_sleep $a && is_sleep $b; do :; done`;

describeSandbox("limits", () => {
  it("kills a command past its timeout together with the processes it started", async () => {
    const clockwork = manualTimeouts();
    const sandbox = testSandbox(site.hidden, { timers: clockwork.timers });
    const marker = `301.${process.pid}${Date.now() % 1000}`;
    const watch = outputWatcher();
    const running = sandbox.run({
      key: "alice",
      argv: bash(`sleep ${marker} & a=$!; (sleep ${marker} & echo $! > /tmp/b); ${bothSleeping}; echo started; wait`),
      workspace: site.alice,
      timeoutMs: 5000,
      onOutput: watch.onOutput,
    });
    await watch.until((s) => s.includes("started"));
    const children = processesWith(`sleep\0${marker}`);
    expect(children).toHaveLength(2);
    expect(clockwork.delays()).toEqual([5000]);
    clockwork.fire(5000);
    const r = await running;
    expect(r.status).toBe("timed_out");
    expect(r.status === "timed_out" && r.timeoutMs).toBe(5000);
    for (const pid of children) expect(existsSync(`/proc/${pid}`), `process ${pid}`).toBe(false);
    expect(processesWith(`sleep\0${marker}`)).toEqual([]);
  });

  it("kills the whole tree when the call is cancelled (/cancel, shutdown)", async () => {
    const sandbox = testSandbox(site.hidden);
    const marker = `302.${process.pid}${Date.now() % 1000}`;
    const watch = outputWatcher();
    const cancel = new AbortController();
    const running = sandbox.run({
      key: "alice",
      argv: bash(`(setsid sleep ${marker} >/dev/null 2>&1 & echo $! > /tmp/b); sleep ${marker} & a=$!; ${bothSleeping}; echo started; wait`),
      workspace: site.alice,
      timeoutMs: 60_000,
      signal: cancel.signal,
      onOutput: watch.onOutput,
    });
    await watch.until((s) => s.includes("started"));
    const children = processesWith(`sleep\0${marker}`);
    expect(children).toHaveLength(2);
    cancel.abort(new Error("/cancel"));
    expect((await running).status).toBe("cancelled");
    expect(processesWith(`sleep\0${marker}`)).toEqual([]);
  });

  it("keeps a fork bomb inside its process limit, while another session's command still runs", async () => {
    const clockwork = manualTimeouts();
    const sandbox = testSandbox(site.hidden, { timers: clockwork.timers, processes: 24 });
    const marker = `bomb${process.pid}x${Date.now() % 100000}`;
    const watch = outputWatcher();
    const bomb = sandbox.run({
      key: "alice",
      argv: bash(`${marker}() { ${marker} | ${marker} & }; ${marker}; sleep 600`),
      workspace: site.alice,
      timeoutMs: 60_000,
      onOutput: watch.onOutput,
    });
    // The bomb has hit the ceiling once bash reports that fork failed.
    await watch.until((s) => s.includes("Resource temporarily unavailable"));
    expect(processesWith(marker).length).toBeLessThanOrEqual(24);
    const other = await sandbox.run({ key: "bob", argv: bash("echo still here"), workspace: site.bob, timeoutMs: 30_000 });
    expect(other.status === "exited" && other.output.stdout).toBe("still here\n");
    expect(processesWith(marker).length).toBeLessThanOrEqual(24);
    clockwork.fire(60_000);
    expect((await bomb).status).toBe("timed_out");
    expect(processesWith(marker)).toEqual([]);
  });

  it("cuts long output to its cap, keeping the start and the end, and says so", async () => {
    const sandbox = testSandbox(site.hidden, { outputBytes: 1000 });
    const r = exited(await sandbox.run({ key: "alice", argv: bash("seq 1 100000; echo the-end >&2"), workspace: site.alice, timeoutMs: 30_000 }));
    expect(r.output.truncated).toBe(true);
    expect(r.output.totalBytes).toBe(588_895 + "the-end\n".length);
    expect(r.output.stdout.startsWith("1\n2\n3\n")).toBe(true);
    expect(r.output.stdout.endsWith("99999\n100000\n")).toBe(true);
    expect(r.output.stdout).toMatch(/\[… \d+ bytes cut …\]/);
    expect(r.output.stderr).toBe("the-end\n");
    expect(Buffer.byteLength(r.output.stdout.replace(/\n\[… \d+ bytes cut …\]\n/, "")) + r.output.stderr.length).toBeLessThanOrEqual(1000);
  });

  it("stops a process that uses up its CPU time", async () => {
    const sandbox = testSandbox(site.hidden);
    const r = exited(await sandbox.run({ key: "alice", argv: bash("while :; do :; done"), workspace: site.alice, timeoutMs: 60_000, cpuSeconds: 1 }));
    expect(r.limit).toBe("cpu");
    expect(r.exitCode).toBe(128 + 24);
  });

  it("caps the memory a process may take", async () => {
    const sandbox = testSandbox(site.hidden, { memoryBytes: 128 * 1024 * 1024 });
    const r = exited(
      await sandbox.run({ key: "alice", argv: ["python3", "-c", "x = bytearray(512 * 1024 * 1024); print('allocated')"], workspace: site.alice, timeoutMs: 30_000 }),
    );
    expect(r.exitCode).not.toBe(0);
    expect(r.output.stdout).not.toContain("allocated");
    expect(r.output.stderr).toContain("MemoryError");
  });

  it("caps the size of a file a command writes", async () => {
    const sandbox = testSandbox(site.hidden, { fileBytes: 1024 * 1024 });
    const r = exited(await sandbox.run({ key: "alice", argv: bash("head -c 5000000 /dev/zero > big.bin"), workspace: site.alice, timeoutMs: 30_000 }));
    expect(r.exitCode).not.toBe(0);
    expect(statSync(join(site.alice, "big.bin")).size).toBeLessThanOrEqual(1024 * 1024);
  });
});

describeSandbox("taking turns", () => {
  it("queues a command past the concurrency cap, says how long it waited, and refuses one past the queue", async () => {
    let now = 10_000;
    const sandbox = testSandbox(site.hidden, { concurrency: 1, queueMax: 1, clock: { now: () => now } });
    const watch = outputWatcher();
    // The first command holds the only slot until the test writes to its FIFO.
    const first = sandbox.run({
      key: "alice",
      argv: bash("mkfifo gate && echo waiting && read line < gate && echo got $line"),
      workspace: site.alice,
      timeoutMs: 30_000,
      onOutput: watch.onOutput,
    });
    await watch.until((s) => s.includes("waiting"));
    let secondStarted = false;
    const second = sandbox.run({ key: "bob", argv: bash("echo bob ran"), workspace: site.bob, timeoutMs: 30_000, onOutput: () => (secondStarted = true) });
    const third = await sandbox.run({ key: "carol", argv: bash("echo carol ran"), workspace: site.bob, timeoutMs: 30_000 });
    expect(third).toEqual({ status: "busy", reason: "the sandbox is busy: 1 commands are running and 1 are waiting (at most 1); try again in a moment" });
    expect(secondStarted).toBe(false);
    now += 2500;
    await writeFile(join(site.alice, "gate"), "go\n");
    expect(exited(await first).output.stdout).toBe("waiting\ngot go\n");
    const r = exited(await second);
    expect(r.output.stdout).toBe("bob ran\n");
    expect(r.waitedMs).toBe(2500);
  });
});
