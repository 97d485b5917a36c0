import { createHash, type Hash } from "node:crypto";
import { existsSync, lstatSync, readdirSync, readFileSync, realpathSync, renameSync, statSync, writeFileSync } from "node:fs";
import { basename, dirname, join, relative, resolve, sep } from "node:path";
import { watch, type FSWatcher } from "chokidar";
import type { Logger } from "pino";
import { z } from "zod";
import type { Catalog, Definition, DefinitionKind } from "./definition.js";

// A supply-chain lock: `npm run skills -- lock` records a content hash of every loaded skill folder and
// agent file; with SKILLS_LOCK=enforce only definitions that still match are used. The loader knows
// nothing of this: the live catalog passes what it loaded through `checkLock`.

export const LOCK_FILE = "skills.lock.json";
export const LOCK_COMMAND = "npm run skills -- lock";
export type LockMode = "off" | "warn" | "enforce";

export interface LockEntry {
  name: string;
  kind: DefinitionKind;
  /** `skills/<name>` or `agents/<file>`: inside SKILLS_DIR / AGENTS_DIR, `/`-separated. */
  path: string;
  /** `sha256:<hex>` of the skill's whole folder, or of the agent's file. */
  hash: string;
}

export interface Lock {
  /** The lock file as messages name it. */
  file: string;
  definitions: LockEntry[];
}

export type LockStatus = "locked" | "changed" | "new" | "missing" | "unreadable";

export interface LockProblem {
  status: Exclude<LockStatus, "locked">;
  kind: DefinitionKind;
  name: string;
  path: string;
  /** The hash on disk now (null when missing or unreadable): a new hash is a new change. */
  hash: string | null;
  message: string;
}

/** A skill folder or agent file that cannot be hashed (unreadable, a symlink out, a FIFO…); the message names it. */
export class LockError extends Error {
  override name = "LockError";
}

const lockSchema = z.object({
  lockfileVersion: z.literal(1, { error: "must be 1 (this file was written by another version, or by hand)" }),
  definitions: z.array(
    z.object({
      name: z.string({ error: "must be the definition's name" }).min(1, { error: "must not be empty" }),
      kind: z.enum(["skill", "agent"], { error: 'must be "skill" or "agent"' }),
      path: z.string({ error: "must be the path such as skills/<name>" }).min(1, { error: "must not be empty" }),
      hash: z.string({ error: "must be a string" }).regex(/^sha256:[0-9a-f]{64}$/, { error: 'must be "sha256:" and 64 hex digits' }),
    }),
    { error: "must be a list of {name, kind, path, hash}" },
  ),
});

/** The lock for everything in `catalog` (definitions the loader skipped are not in it). Throws LockError. */
export function computeLock(catalog: Catalog): LockEntry[] {
  return definitionsOf(catalog).map((def) => ({ name: def.name, kind: def.kind, path: lockPath(def), hash: hashDefinition(def) }));
}

/** Writes the lock file atomically (a reader sees the old or the new file, never half of one). */
export function writeLock(file: string, definitions: readonly LockEntry[]): void {
  const body = { lockfileVersion: 1, definitions: [...definitions].sort((a, b) => compare(`${a.kind} ${a.name}`, `${b.kind} ${b.name}`)) };
  const temp = join(dirname(file), `.${basename(file)}.${process.pid}.tmp`);
  writeFileSync(temp, `${JSON.stringify(body, null, 2)}\n`);
  renameSync(temp, file);
}

export type LockRead = { ok: true; lock: Lock } | { ok: false; missing: boolean; error: string };

/** Reads and validates a lock file; a missing or malformed one comes back as one sentence naming the file. */
export function readLock(file: string): LockRead {
  const name = display(file);
  const redo = `fix it or run \`${LOCK_COMMAND}\` to write it again`;
  if (!existsSync(file)) {
    return { ok: false, missing: true, error: `${name} does not exist; review skills/ and agents/, then run \`${LOCK_COMMAND}\` to create it` };
  }
  let data: unknown;
  try {
    data = JSON.parse(readFileSync(file, "utf8"));
  } catch (error) {
    const detail = error instanceof SyntaxError ? `is not valid JSON (${error.message})` : `cannot be read (${codeOf(error)})`;
    return { ok: false, missing: false, error: `${name} ${detail}; ${redo}` };
  }
  const parsed = lockSchema.safeParse(data);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const where = issue.path.map((p, i) => (typeof p === "number" ? `[${p}]` : `${i > 0 ? "." : ""}${String(p)}`)).join("");
    return { ok: false, missing: false, error: `${name}: ${where || "the file"} ${issue.message}; ${redo}` };
  }
  const seen = new Set<string>();
  for (const entry of parsed.data.definitions) {
    const key = `${entry.kind} ${entry.name}`;
    if (seen.has(key)) return { ok: false, missing: false, error: `${name}: ${entry.kind} "${entry.name}" is listed twice; ${redo}` };
    seen.add(key);
  }
  return { ok: true, lock: { file: name, definitions: parsed.data.definitions } };
}

/**
 * Compares what the loader loaded with the lock: `allowed` holds the definitions whose content matches
 * it; `problems` has one entry per changed, new or unreadable definition and per locked one that did not load.
 */
export function checkLock(catalog: Catalog, lock: Lock): { allowed: Catalog; problems: LockProblem[] } {
  const locked = new Map(lock.definitions.map((e) => [`${e.kind} ${e.name}`, e]));
  const skills = new Map<string, Definition>();
  const agents = new Map<string, Definition>();
  const problems: LockProblem[] = [];
  const what = (kind: DefinitionKind, name: string, path: string) => `${kind} "${name}" (${path})`;
  const relock = `review it, then run \`${LOCK_COMMAND}\``;
  for (const def of definitionsOf(catalog)) {
    const path = lockPath(def);
    const entry = locked.get(`${def.kind} ${def.name}`);
    locked.delete(`${def.kind} ${def.name}`);
    let hash: string;
    try {
      hash = hashDefinition(def);
    } catch (error) {
      if (!(error instanceof LockError)) throw error;
      problems.push({
        status: "unreadable",
        kind: def.kind,
        name: def.name,
        path,
        hash: null,
        message: `${what(def.kind, def.name, path)} cannot be checked against ${lock.file}: ${error.message}`,
      });
      continue;
    }
    if (!entry) {
      problems.push({ status: "new", kind: def.kind, name: def.name, path, hash, message: `${what(def.kind, def.name, path)} is not in ${lock.file}; ${relock}` });
    } else if (entry.hash !== hash || entry.path !== path) {
      const moved = entry.path !== path ? ` (locked at ${entry.path})` : "";
      problems.push({
        status: "changed",
        kind: def.kind,
        name: def.name,
        path,
        hash,
        message: `${what(def.kind, def.name, path)} changed since ${lock.file} was written${moved}; ${relock}`,
      });
    } else {
      (def.kind === "skill" ? skills : agents).set(def.name, def);
    }
  }
  for (const entry of locked.values()) {
    const gone = entry.kind === "skill" ? "its folder is gone" : "its file is gone";
    problems.push({
      status: "missing",
      kind: entry.kind,
      name: entry.name,
      path: entry.path,
      hash: null,
      message: `${what(entry.kind, entry.name, entry.path)} is in ${lock.file} but did not load (${gone}, or it was skipped for an error); if it was removed on purpose, run \`${LOCK_COMMAND}\``,
    });
  }
  return { allowed: { ...catalog, skills, agents }, problems };
}

/** `skills/<folder>`, `agents/<name>.md` or `agents/<name>/AGENT.md`, whatever SKILLS_DIR and AGENTS_DIR are called. */
export function lockPath(def: Definition): string {
  if (def.kind === "skill") return `skills/${basename(def.folder ?? dirname(resolve(def.source)))}`;
  const file = resolve(def.source);
  return basename(file) === "AGENT.md" ? `agents/${basename(dirname(file))}/AGENT.md` : `agents/${basename(file)}`;
}

/** The content hash of a skill's folder or an agent's file. Throws LockError naming what could not be read. */
export function hashDefinition(def: Definition): string {
  return def.kind === "skill" ? hashFolder(def.folder ?? dirname(resolve(def.source))) : hashFile(resolve(def.source));
}

/**
 * Every file under `folder`, in order of its `/`-separated relative path (Unicode NFC), as path + bytes: the
 * same content hashes the same on any machine. A symlink is recorded by where it leads inside the folder, never
 * followed out of it; nothing is skipped (dot files included), and what cannot be read is an error.
 */
export function hashFolder(folder: string): string {
  const top = resolve(folder);
  // Containment is judged on real paths; messages name the path as the admin knows it.
  const root = attempt(top, () => realpathSync(top));
  const entries: Array<{ rel: string; abs: string }> = [];
  const walk = (dir: string) => {
    for (const name of attempt(dir, () => readdirSync(dir))) {
      const abs = join(dir, name);
      if (attempt(abs, () => lstatSync(abs)).isDirectory()) walk(abs);
      else entries.push({ rel: relative(top, abs).split(sep).join("/").normalize("NFC"), abs });
      if (entries.length > MAX_LOCKED_FILES)
        throw new LockError(`${display(top)}: has more than ${MAX_LOCKED_FILES} files; a skill folder this large cannot be checked on every reload`);
    }
  };
  walk(top);
  const hash = createHash("sha256");
  const budget = { left: MAX_LOCKED_BYTES };
  for (const { rel, abs } of entries.sort((a, b) => compare(a.rel, b.rel))) addEntry(hash, root, rel, abs, budget);
  return `sha256:${hash.digest("hex")}`;
}

// The lock is checked on the event loop at start and after every change: these bound what one skill folder costs.
/** Files in one skill folder. */
export const MAX_LOCKED_FILES = 5000;
/** Bytes in one skill folder, all files together (hashing runs at several hundred MB/s: tens of ms). */
export const MAX_LOCKED_BYTES = 64 * 1024 * 1024;

function hashFile(file: string): string {
  const hash = createHash("sha256");
  const info = attempt(file, () => statSync(file));
  if (!info.isFile()) throw new LockError(`${display(file)}: is not a regular file`);
  const bytes = attempt(file, () => readFileSync(file));
  hash.update(`file\0${basename(file)}\0${bytes.length}\0`).update(bytes);
  return `sha256:${hash.digest("hex")}`;
}

function addEntry(hash: Hash, root: string, rel: string, abs: string, budget: { left: number }): void {
  const info = attempt(abs, () => lstatSync(abs));
  if (info.isSymbolicLink()) {
    let target: string;
    try {
      target = realpathSync(abs);
    } catch {
      throw new LockError(`${display(abs)}: is a symlink to something that does not exist; remove it or point it at a file in the folder`);
    }
    if (target !== root && !target.startsWith(root + sep)) {
      throw new LockError(`${display(abs)}: is a symlink to ${target}, outside the skill folder; copy the file into the folder instead`);
    }
    // Where it leads, not what it leads to: that file is hashed under its own path.
    hash.update(`link\0${rel}\0${relative(root, target).split(sep).join("/")}\0`);
  } else if (info.isFile()) {
    budget.left -= info.size;
    if (budget.left < 0)
      throw new LockError(`${display(abs)}: the skill folder holds more than ${MAX_LOCKED_BYTES / 1024 / 1024} MB with this file; move large data out of it`);
    const bytes = attempt(abs, () => readFileSync(abs));
    if (bytes.length !== info.size) throw new LockError(`${display(abs)}: changed while it was being checked; it is checked again on the next reload`);
    hash.update(`file\0${rel}\0${bytes.length}\0`).update(bytes);
  } else {
    throw new LockError(`${display(abs)}: is not a regular file (a FIFO, socket or device); remove it from the skill folder`);
  }
}

/**
 * What the live catalog does with the lock after every load: under `enforce` only matching definitions
 * are kept, under `warn` everything is; each problem is logged once, until it changes.
 */
export class CatalogLock {
  private reported = new Set<string>();
  private loaded = new Set<string>();
  private watcher: FSWatcher | null = null;

  constructor(
    private readonly mode: Exclude<LockMode, "off">,
    private readonly file: string,
    private readonly log: Logger,
  ) {}

  /** Null when the lock is off. */
  static from(settings: { mode: LockMode; file: string } | undefined, log: Logger): CatalogLock | null {
    return settings && settings.mode !== "off" ? new CatalogLock(settings.mode, resolve(settings.file), log) : null;
  }

  apply(catalog: Catalog): Catalog {
    const enforce = this.mode === "enforce";
    const read = readLock(this.file);
    const lines: Array<{ key: string; line: string; fields: Record<string, unknown> }> = [];
    let result = catalog;
    if (!read.ok) {
      if (enforce) result = { ...catalog, skills: new Map(), agents: new Map() };
      const outcome = enforce ? "SKILLS_LOCK=enforce, so no skills or agents are loaded" : "SKILLS_LOCK=warn, so everything loaded unchecked";
      lines.push({ key: `file ${read.error}`, line: `${read.error}. ${outcome}`, fields: { lockFile: display(this.file) } });
    } else {
      const check = checkLock(catalog, read.lock);
      if (enforce) result = check.allowed;
      for (const p of check.problems) {
        const key = `${p.kind} ${p.name}`;
        const outcome = p.status === "missing" ? "" : enforce ? (this.loaded.has(key) ? " Unloaded." : " Not loaded.") : " Loaded anyway (SKILLS_LOCK=warn).";
        lines.push({ key: `${p.status} ${key} ${p.path} ${p.hash}`, line: `${p.message}.${outcome}`, fields: { [p.kind]: p.name, path: p.path, lock: p.status } });
      }
    }
    for (const { key, line, fields } of lines) if (!this.reported.has(key)) this.log[enforce ? "error" : "warn"](fields, line);
    this.reported = new Set(lines.map((l) => l.key));
    this.loaded = new Set(definitionsOf(result).map((d) => `${d.kind} ${d.name}`));
    return result;
  }

  /** Calls `onChange` when the lock file is written, replaced or removed; resolves once watching. */
  watch(onChange: () => void): Promise<void> {
    const dir = dirname(this.file);
    this.watcher = watch(dir, { ignoreInitial: true, depth: 0, ignored: (path) => path !== dir && path !== this.file });
    this.watcher.on("all", () => onChange());
    this.watcher.on("error", (error) => this.log.warn({ err: error }, `watching ${display(this.file)} failed; restart to pick up a new lock`));
    return new Promise((done) => this.watcher!.once("ready", () => done()));
  }

  async close(): Promise<void> {
    await this.watcher?.close();
  }
}

function definitionsOf(catalog: Catalog): Definition[] {
  return [...catalog.skills.values(), ...catalog.agents.values()];
}

function attempt<T>(path: string, read: () => T): T {
  try {
    return read();
  } catch (error) {
    throw new LockError(`${display(path)}: cannot be read (${codeOf(error)}); fix its permissions or remove it`);
  }
}

function codeOf(error: unknown): string {
  return (error as NodeJS.ErrnoException | null)?.code ?? (error instanceof Error ? error.message : String(error));
}

/** Code-unit order, the same everywhere (localeCompare is not). */
function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function display(path: string): string {
  const rel = relative(process.cwd(), path);
  return rel === "" || rel.startsWith("..") ? path : rel;
}
