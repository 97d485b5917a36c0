// The supply-chain lock: `npm run skills -- lock` and `list` as an admin runs them (a real child process in the
// deployment's working directory), and SKILLS_LOCK=warn/enforce in the live catalog, hot reload included.
import { execFileSync, spawnSync } from "node:child_process";
import { chmodSync, cpSync, existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { Catalog } from "../../src/catalog/definition.js";
import { LiveCatalog } from "../../src/catalog/live.js";
import { loadCatalog } from "../../src/catalog/loader.js";
import { computeLock, hashFolder, LOCK_FILE, LockError, MAX_LOCKED_FILES, writeLock, type LockMode } from "../../src/catalog/lock.js";
import { runSkills, type SkillsCommand } from "../../src/cli/skills-command.js";
import { ConfigError, loadConfig } from "../../src/config.js";
import { createLogger } from "../../src/log.js";
import { deferred } from "../helpers/deferred.js";
import { agentFile, skillFile, writeDefinitions } from "../helpers/harness.js";
import { nodeArgs } from "../integration/child-process.js";

/** Paths readFileSync refuses with EACCES, as the file system does for a file the process may not read. */
const unreadable = vi.hoisted(() => new Set<string>());
vi.mock("node:fs", async (importOriginal) => {
  const real = await importOriginal<typeof import("node:fs")>();
  const readFileSync = ((path: Parameters<typeof real.readFileSync>[0], ...rest: unknown[]) => {
    if (unreadable.has(String(path))) throw Object.assign(new Error(`EACCES: permission denied, open '${String(path)}'`), { code: "EACCES" });
    return (real.readFileSync as (...args: unknown[]) => unknown)(path, ...rest);
  }) as typeof real.readFileSync;
  return { ...real, default: { ...real, readFileSync }, readFileSync };
});

const FILES = {
  ...skillFile("planner", "Plan trips. Read references/airlines.md for airlines."),
  "skills/planner/references/airlines.md": "# Airlines\nTAP flies to Lisbon.\n",
  ...skillFile("notes", "Take notes."),
  ...agentFile("researcher", "Research."),
  "agents/nested/AGENT.md": "---\nname: nested\ndescription: An agent with a folder.\n---\nNested.\n",
};

let roots: string[] = [];
const catalogs: LiveCatalog[] = [];
afterEach(async () => {
  for (const c of catalogs.splice(0)) await c.close();
  for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true });
});

function deployment(files: Record<string, string> = FILES) {
  const defs = writeDefinitions(files);
  roots.push(defs.root);
  return defs;
}

/**
 * `npm run skills -- <args>` in `root`, with skills/ and agents/ there: a real child process, as an admin runs it. One
 * test per command goes through the entry point; the rest run the same command in this process (`inProcess`).
 */
function skills(root: string, ...args: string[]) {
  const result = spawnSync(process.execPath, [...nodeArgs("src/cli/skills.ts"), ...args], {
    cwd: root,
    encoding: "utf8",
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", SKILLS_DIR: "skills", AGENTS_DIR: "agents" },
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** The same command run in this process, in `root` as its working directory, with the child's environment. */
async function inProcess(root: string, command: SkillsCommand) {
  const config = loadConfig({ PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", SKILLS_DIR: "skills", AGENTS_DIR: "agents", LOG_LEVEL: "error" });
  let stdout = "";
  let stderr = "";
  const was = process.cwd();
  process.chdir(root);
  try {
    const status = await runSkills(command, undefined, config, { write: (text: string) => (stdout += text) }, { write: (text: string) => (stderr += text) });
    return { status, stdout, stderr };
  } finally {
    process.chdir(was);
  }
}

/** The LOCK column of `list`, by name. */
function lockColumn(stdout: string): Record<string, string> {
  const lines = stdout.split("\n");
  const header = lines[0]!;
  const at = header.indexOf("LOCK");
  const rows = lines.slice(1, lines.indexOf(""));
  return Object.fromEntries(rows.map((row) => [row.split(/\s+/)[0]!, row.slice(at).split(/\s+/)[0]!]));
}

function lockNow(root: string): void {
  writeLock(join(root, LOCK_FILE), computeLock(loadCatalog(join(root, "skills"), join(root, "agents"))));
}

function logged() {
  const lines: Array<{ level: number; msg: string } & Record<string, unknown>> = [];
  const log = createLogger("info", { write: (line: string) => void lines.push(JSON.parse(line)) });
  // Only the lock's own lines (they carry `lock` or `lockFile`), whatever the loader logs besides.
  const lockLines = () => lines.filter((l) => "lock" in l || "lockFile" in l);
  return { log, lockLines, about: (text: string) => lockLines().filter((l) => l.msg.includes(text)) };
}

function live(root: string, mode: LockMode, log = logged()) {
  const catalog = new LiveCatalog(join(root, "skills"), join(root, "agents"), {
    log: log.log,
    env: {},
    debounceMs: 50,
    lock: { mode, file: join(root, LOCK_FILE) },
  });
  catalogs.push(catalog);
  return { catalog, ...log };
}

const names = (c: Catalog) => [...c.skills.keys(), ...c.agents.keys()].sort();

describe("npm run skills -- lock / list", () => {
  it("writes skills.lock.json in the working directory with relative paths and hashes; list shows each as locked", () => {
    const { root } = deployment();
    expect(skills(root, "list").stdout).not.toContain("locked");

    const locked = skills(root, "lock");
    expect(locked.stdout).toContain(`wrote ${LOCK_FILE}: 2 skills, 2 agents`);
    expect(locked.status).toBe(0);
    const text = readFileSync(join(root, LOCK_FILE), "utf8");
    expect(text).not.toContain(root);
    expect(JSON.parse(text)).toEqual({
      lockfileVersion: 1,
      definitions: [
        { name: "nested", kind: "agent", path: "agents/nested/AGENT.md", hash: expect.stringMatching(/^sha256:[0-9a-f]{64}$/) },
        { name: "researcher", kind: "agent", path: "agents/researcher.md", hash: expect.stringMatching(/^sha256:[0-9a-f]{64}$/) },
        { name: "notes", kind: "skill", path: "skills/notes", hash: expect.stringMatching(/^sha256:[0-9a-f]{64}$/) },
        { name: "planner", kind: "skill", path: "skills/planner", hash: expect.stringMatching(/^sha256:[0-9a-f]{64}$/) },
      ],
    });

    const list = skills(root, "list");
    expect(list.status).toBe(0);
    expect(lockColumn(list.stdout)).toEqual({ planner: "locked", notes: "locked", researcher: "locked", nested: "locked" });
  });

  it("list shows an edited file under references/ as changed, a new skill as new and a deleted one as missing; re-locking clears them", async () => {
    const { root } = deployment();
    expect((await inProcess(root, "lock")).status).toBe(0);
    writeFileSync(join(root, "skills/planner/references/airlines.md"), "# Airlines\nTAP and SATA fly to Lisbon.\n");
    write(root, skillFile("packing", "Pack."));
    rmSync(join(root, "skills/notes"), { recursive: true });

    const list = await inProcess(root, "list");
    expect(lockColumn(list.stdout)).toEqual({ planner: "changed", packing: "new", researcher: "locked", nested: "locked", notes: "missing" });
    expect(list.stdout).toContain('skill "planner" (skills/planner) changed since skills.lock.json was written; review it, then run `npm run skills -- lock`');
    expect(list.stdout).toContain('skill "packing" (skills/packing) is not in skills.lock.json; review it');
    expect(list.stdout).toContain('skill "notes" (skills/notes) is in skills.lock.json but did not load (its folder is gone');

    expect((await inProcess(root, "lock")).status).toBe(0);
    expect(lockColumn((await inProcess(root, "list")).stdout)).toEqual({ planner: "locked", packing: "locked", researcher: "locked", nested: "locked" });
  });

  it("refuses to lock a skill with a symlink that leads out of its folder, naming the link, and writes nothing", async () => {
    const { root } = deployment();
    writeFileSync(join(root, "outside.txt"), "not part of the skill");
    symlinkSync(join(root, "outside.txt"), join(root, "skills/planner/references/fares.md"));

    const result = await inProcess(root, "lock");
    expect(result.status).toBe(1);
    expect(result.stderr).toContain(`error: skills/planner/references/fares.md: is a symlink to ${join(root, "outside.txt")}, outside the skill folder`);
    expect(result.stderr).toContain(`${LOCK_FILE} was not written`);
    expect(existsSync(join(root, LOCK_FILE))).toBe(false);
  });

  it("reports a malformed lock file with its name and what is wrong, and exits 1", async () => {
    const { root } = deployment();
    writeFileSync(join(root, LOCK_FILE), "{ not json");
    let list = await inProcess(root, "list");
    expect(list.status).toBe(1);
    expect(list.stdout).toMatch(/error: skills\.lock\.json is not valid JSON \(.+\); fix it or run `npm run skills -- lock` to write it again/);

    writeFileSync(
      join(root, LOCK_FILE),
      JSON.stringify({ lockfileVersion: 1, definitions: [{ name: "planner", kind: "tool", path: "skills/planner", hash: "sha256:00" }] }),
    );
    list = await inProcess(root, "list");
    expect(list.status).toBe(1);
    expect(list.stdout).toContain('error: skills.lock.json: definitions[0].kind must be "skill" or "agent"');
  });
});

describe("the content hash", () => {
  it("is the same for the same content in two different directories, and differs when a path, a byte or a dot file differs", () => {
    const a = deployment();
    const b = deployment();
    expect(hashFolder(join(a.skills, "planner"))).toBe(hashFolder(join(b.skills, "planner")));
    expect(computeLock(loadCatalog(a.skills, a.agents))).toEqual(computeLock(loadCatalog(b.skills, b.agents)));

    const before = hashFolder(join(b.skills, "planner"));
    mkdirSync(join(b.skills, "planner/empty"));
    expect(hashFolder(join(b.skills, "planner"))).toBe(before); // folders are not content (git keeps no empty ones)
    writeFileSync(join(b.skills, "planner/.hidden"), "");
    expect(hashFolder(join(b.skills, "planner"))).not.toBe(before);
    rmSync(join(b.skills, "planner/.hidden"));
    cpSync(join(b.skills, "planner/references"), join(b.skills, "planner/refs"), { recursive: true });
    rmSync(join(b.skills, "planner/references"), { recursive: true });
    expect(hashFolder(join(b.skills, "planner"))).not.toBe(before);
  });

  it("records a symlink that stays inside the folder by where it leads, and refuses a FIFO by name", () => {
    const { skills: dir } = deployment();
    symlinkSync("references/airlines.md", join(dir, "planner/airlines.md"));
    const withLink = hashFolder(join(dir, "planner"));
    rmSync(join(dir, "planner/airlines.md"));
    symlinkSync("SKILL.md", join(dir, "planner/airlines.md"));
    expect(hashFolder(join(dir, "planner"))).not.toBe(withLink);

    execFileSync("mkfifo", [join(dir, "notes/pipe")]);
    expect(() => hashFolder(join(dir, "notes"))).toThrow(LockError);
    expect(() => hashFolder(join(dir, "notes"))).toThrow(/notes\/pipe: is not a regular file/);
  });

  it("names a file it cannot read instead of skipping it", () => {
    const { skills: dir } = deployment();
    const file = join(dir, "planner/references/airlines.md");
    // Root reads any file whatever its mode (CI runs as root), so the permission error is the file system's answer
    // given by the mocked readFileSync; as another user chmod 000 gives the same EACCES.
    chmodSync(file, 0o000);
    unreadable.add(file);
    try {
      expect(() => hashFolder(join(dir, "planner"))).toThrow(/planner\/references\/airlines\.md: cannot be read \(EACCES\)/);
    } finally {
      unreadable.delete(file);
    }
  });
});

describe("SKILLS_LOCK in the live catalog", () => {
  it("enforce loads only what matches the lock; a skill whose reference file changed is skipped and logged once per change", () => {
    const { root } = deployment();
    lockNow(root);
    writeFileSync(join(root, "skills/planner/references/airlines.md"), "# Airlines\nchanged\n");
    const { catalog, about } = live(root, "enforce");
    expect(names(catalog.current)).toEqual(["nested", "notes", "researcher"]);
    const line = about('skill "planner"');
    expect(line).toHaveLength(1);
    expect(line[0]).toMatchObject({ skill: "planner", path: "skills/planner", lock: "changed" });
    expect(line[0]!.msg).toBe(
      'skill "planner" (skills/planner) changed since ' + join(root, LOCK_FILE) + " was written; review it, then run `npm run skills -- lock`. Not loaded.",
    );

    catalog.reload();
    catalog.reload();
    expect(about('skill "planner"')).toHaveLength(1);
    writeFileSync(join(root, "skills/planner/references/airlines.md"), "# Airlines\nchanged again\n");
    catalog.reload();
    expect(about('skill "planner"')).toHaveLength(2);

    lockNow(root);
    expect(names(catalog.reload())).toEqual(["nested", "notes", "planner", "researcher"]);
  });

  it("enforce skips a new skill and reports a locked one whose folder is gone", () => {
    const { root } = deployment();
    lockNow(root);
    rmSync(join(root, "skills/notes"), { recursive: true });
    write(root, skillFile("packing", "Pack."));
    const { catalog, about } = live(root, "enforce");
    expect(names(catalog.current)).toEqual(["nested", "planner", "researcher"]);
    expect(about('skill "packing" (skills/packing) is not in')[0]!.msg).toContain("Not loaded.");
    expect(about('skill "notes" (skills/notes) is in')[0]!.msg).toContain("did not load (its folder is gone");
  });

  it("warn loads changed and new definitions and warns about each", () => {
    const { root } = deployment();
    lockNow(root);
    writeFileSync(join(root, "agents/researcher.md"), "---\nname: researcher\ndescription: Researches.\n---\nResearch harder.\n");
    write(root, skillFile("packing", "Pack."));
    const { catalog, lockLines } = live(root, "warn");
    expect(names(catalog.current)).toEqual(["nested", "notes", "packing", "planner", "researcher"]);
    expect(lockLines().map((l) => [l.level, l.lock, l.msg.split(" (")[0], l.msg.endsWith("Loaded anyway (SKILLS_LOCK=warn).")])).toEqual([
      [40, "new", 'skill "packing"', true],
      [40, "changed", 'agent "researcher"', true],
    ]);
  });

  it("enforce without a lock file loads nothing and says to run npm run skills -- lock", () => {
    const { root } = deployment();
    const { catalog, lockLines } = live(root, "enforce");
    expect(names(catalog.current)).toEqual([]);
    expect(lockLines()).toHaveLength(1);
    expect(lockLines()[0]!.msg).toBe(
      `${join(root, LOCK_FILE)} does not exist; review skills/ and agents/, then run \`npm run skills -- lock\` to create it. SKILLS_LOCK=enforce, so no skills or agents are loaded`,
    );
  });

  it("a malformed lock file names the file and the fault; enforce then loads nothing, warn everything", () => {
    const { root } = deployment();
    writeFileSync(join(root, LOCK_FILE), JSON.stringify({ lockfileVersion: 1, definitions: [{ name: "planner", kind: "skill", path: "skills/planner" }] }));
    const enforced = live(root, "enforce");
    expect(names(enforced.catalog.current)).toEqual([]);
    expect(enforced.lockLines()[0]!.msg).toContain(`${join(root, LOCK_FILE)}: definitions[0].hash must be a string; fix it or run \`npm run skills -- lock\``);
    const warned = live(root, "warn");
    expect(names(warned.catalog.current)).toEqual(["nested", "notes", "planner", "researcher"]);
    expect(warned.lockLines()[0]!.msg).toContain("SKILLS_LOCK=warn, so everything loaded unchecked");
  });

  it("off never reads the lock", () => {
    const { root } = deployment();
    writeFileSync(join(root, LOCK_FILE), "garbage");
    const { catalog, lockLines } = live(root, "off");
    expect(names(catalog.current)).toEqual(["nested", "notes", "planner", "researcher"]);
    expect(lockLines()).toEqual([]);
  });

  it("hot reload: a change to a file in a dot folder inside a skill folder is noticed, and under enforce unloads the skill", async () => {
    const { root } = deployment();
    mkdirSync(join(root, "skills/planner/.private"), { recursive: true });
    writeFileSync(join(root, "skills/planner/.private/notes.md"), "first version\n");
    lockNow(root);
    const { catalog } = live(root, "enforce");
    await catalog.watch();
    expect(names(catalog.current)).toContain("planner");
    const unloaded = deferred<Catalog>();
    catalog.onReload((c) => !c.skills.has("planner") && unloaded.resolve(c));
    // read_skill_file serves dot files, and the lock hashes them: a change must not wait for some other change.
    writeFileSync(join(root, "skills/planner/.private/notes.md"), "a version nobody reviewed\n");
    expect(names(await unloaded.promise)).not.toContain("planner");
  });

  it("refuses to lock a skill folder holding more than the file or byte limits, naming it", () => {
    const { root } = deployment();
    for (let i = 0; i <= MAX_LOCKED_FILES; i++) writeFileSync(join(root, `skills/notes/f${i}.txt`), "");
    expect(() => hashFolder(join(root, "skills/notes"))).toThrow(
      new LockError(`${join(root, "skills/notes")}: has more than ${MAX_LOCKED_FILES} files; a skill folder this large cannot be checked on every reload`),
    );
  });

  it("hot reload: a skill edited while the gateway runs under enforce is unloaded with a log line; re-locking brings it back", async () => {
    const { root } = deployment();
    expect((await inProcess(root, "lock")).status).toBe(0);
    const { catalog, about } = live(root, "enforce");
    await catalog.watch();
    expect(names(catalog.current)).toContain("planner");

    const reloaded = (until: (c: Catalog) => boolean) => {
      const next = deferred<Catalog>();
      catalog.onReload((c) => until(c) && next.resolve(c));
      return next.promise;
    };
    let change = reloaded((c) => !c.skills.has("planner"));
    writeFileSync(join(root, "skills/planner/SKILL.md"), "---\nname: planner\ndescription: Plans, differently.\n---\nDo something else.\n");
    await change;
    expect(about('skill "planner"').map((l) => l.msg.endsWith("Unloaded."))).toEqual([true]);

    // The admin reviews the change and re-locks; the lock file changing is itself a reload.
    change = reloaded((c) => c.skills.has("planner"));
    expect((await inProcess(root, "lock")).status).toBe(0);
    expect((await change).skills.get("planner")!.description).toBe("Plans, differently.");
  });
});

describe("SKILLS_LOCK in the configuration", () => {
  it("defaults to off and refuses other words, naming the variable", () => {
    expect(loadConfig({}).SKILLS_LOCK).toBe("off");
    expect(loadConfig({ SKILLS_LOCK: "enforce" }).SKILLS_LOCK).toBe("enforce");
    expect(() => loadConfig({ SKILLS_LOCK: "strict" })).toThrow(ConfigError);
    expect(() => loadConfig({ SKILLS_LOCK: "strict" })).toThrow(/SKILLS_LOCK: must be "off", "warn" or "enforce"/);
  });
});

function write(root: string, files: Record<string, string>): void {
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
}
