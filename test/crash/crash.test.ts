// The crash suite: the real gateway as a child process (terminal chat in --jsonl mode), the real SDK against
// the strict fake Messages API over HTTP, SIGKILLed at seeded points of a multi-level conversation with a
// side-effecting tool, restarted, and checked after every restart.
import { createServer, type Server } from "node:http";
import { rmSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  lastUserText,
  reply,
  startFakeAnthropic,
  systemText,
  text,
  toolUse,
  type FakeAnthropic,
  type FakeReply,
  type MessagesRequest,
} from "../fakes/anthropic/server.js";
import { writeDefinitions } from "../helpers/harness.js";
import { run, type Proc } from "../integration/child-process.js";
import { Prng } from "../sim/prng.js";
import { SqliteStore } from "../../src/store/sqlite/sqlite-store.js";

const SEED = Number(process.env.CRASH_SEED ?? 20261121);
// `npm test` kills 10 times, which reaches every kind of kill point (checked below); `npm run soak` kills 100 times.
const KILLS = Number(process.env.CRASH_KILLS ?? 10);

let fake: FakeAnthropic;
let ledger: Server;
let ledgerUrl = "";
const posts = new Map<string, number>();
let holdNextPost: (() => void) | null = null;

beforeAll(async () => {
  fake = await startFakeAnthropic();
  // The outside world: a ledger that counts each booking it receives. It can hold a request open, so the
  // gateway can be killed between the tool's start and its result.
  ledger = createServer((req, res) => {
    let body = "";
    req.on("data", (c: Buffer) => (body += c.toString()));
    req.on("end", () => {
      posts.set(body, (posts.get(body) ?? 0) + 1);
      if (holdNextPost) {
        const hit = holdNextPost;
        holdNextPost = null;
        hit();
        return; // never answered: the process dies first
      }
      res.writeHead(201).end("booked");
    });
  });
  await new Promise<void>((r) => ledger.listen(0, "127.0.0.1", r));
  ledgerUrl = `http://127.0.0.1:${(ledger.address() as { port: number }).port}/book`;
});
afterAll(async () => {
  ledger.closeAllConnections();
  ledger.close();
  await fake.close();
});

/** The model: main hands over to the interview skill, which books through http_request (approval needed). */
function model(req: MessagesRequest): FakeReply {
  const system = systemText(req);
  const last = req.messages[req.messages.length - 1]!;
  const results = Array.isArray(last.content) ? (last.content as Array<{ type: string; content?: unknown }>).filter((b) => b.type === "tool_result") : [];
  if (system.includes('skill "interview"')) {
    if (results.length > 0) return reply(toolUse("complete", { result: `booking: ${String(results[0]!.content).slice(0, 40)}` }));
    const said = lastUserText(req);
    if (said.startsWith("Lisbon")) return reply(toolUse("http_request", { method: "POST", url: ledgerUrl, body: `booking for ${said}` }));
    return text("Where to?");
  }
  if (results.length > 0) return text("Booked.");
  return reply(toolUse("use_skill", { name: "interview", message: "ask where to go" }));
}

describe("crash suite", () => {
  it(
    `survives ${KILLS} SIGKILLs at seeded points (seed ${SEED}) without losing or doubling anything`,
    async () => {
      const prng = new Prng(SEED);
      const defs = writeDefinitions({ "skills/interview/SKILL.md": "---\nname: interview\ndescription: Plans trips.\n---\nAsk, then book.\n" });
      const env = {
        ANTHROPIC_API_KEY: "k",
        ANTHROPIC_BASE_URL: fake.url,
        ANTHROPIC_MAX_RETRIES: "0",
        DATA_DIR: join(defs.root, "data"),
        SKILLS_DIR: defs.skills,
        AGENTS_DIR: defs.agents,
        LOG_LEVEL: "error",
        // The ledger stands for an intranet service: the egress guard refuses loopback unless an admin allows it.
        HTTP_REQUEST_ALLOW: "127.0.0.1",
      };
      const shown: Array<Record<string, unknown>> = [];
      const stacksAtKill: string[] = [];
      let proc: Proc | null = null;
      let kills = 0;
      const killedAt = new Set<string>();
      let conversations = 0;
      const start = () => {
        proc = run("providers/console/cli.ts", ["--jsonl"], env);
        proc.child.stdout.on("data", () => {});
        return proc;
      };
      const kill = async () => {
        proc!.child.kill("SIGKILL");
        await proc!.exited;
        for (const line of proc!.lines) shown.push(JSON.parse(line) as Record<string, unknown>);
        kills++;
        stacksAtKill.push(await storedStackNames(env.DATA_DIR));
        proc = null;
      };
      try {
        fake.reset();
        while (kills < KILLS) {
          conversations++;
          const session = `c${conversations}`;
          // The steps of one conversation; each is resent (same id) until its answer has been shown.
          const steps: Array<{ id: string; text: () => string; done: (l: Record<string, unknown>) => boolean }> = [];
          let approval = "";
          steps.push({ id: `${session}-1`, text: () => "plan a trip", done: (l) => l.text === "Where to?" });
          steps.push({
            id: `${session}-2`,
            text: () => `Lisbon (${session})`,
            done: (l) => typeof l.approval_id === "string" && ((approval = String(l.approval_id)), true),
          });
          steps.push({ id: `${session}-3`, text: () => `/approve ${approval}`, done: (l) => l.agent === "main" && l.text === "Booked." });
          for (const step of steps) {
            for (;;) {
              const p = proc ?? start();
              const point = kills < KILLS ? prng.weighted({ none: 2, model: 3, tool: step.id.endsWith("-3") ? 4 : 0, reply: 2 }) : "none";
              let killNow: Promise<void> | null = null;
              if (point === "model") {
                killNow = new Promise((resolve) => fake.fallback(() => (fake.fallback(model), resolve(), { hang: true })));
              } else {
                fake.fallback(model);
                if (point === "tool") killNow = new Promise((resolve) => (holdNextPost = resolve));
              }
              const seenBefore = p.lines.length;
              p.send({ text: step.text(), id: step.id, session });
              const answered = p.lineAfter(seenBefore, (l) => step.done(JSON.parse(l) as Record<string, unknown>)).then(() => "answered" as const);
              const outcome = await Promise.race([answered, ...(killNow ? [killNow.then(() => "kill" as const)] : [])]);
              if (outcome === "kill") {
                killedAt.add(point);
                await kill();
                holdNextPost = null;
                continue; // restart and resend the same step (same id: processed once)
              }
              // Killed right after the answer was shown, while the process records the delivery.
              if (point === "reply") {
                killedAt.add(point);
                await kill();
              }
              // A planned kill point this step never reached must not fire during a later one.
              fake.fallback(model);
              holdNextPost = null;
              break;
            }
          }
        }
        if (proc) {
          (proc as Proc).child.stdin.end();
          await (proc as Proc).exited;
          for (const line of (proc as Proc).lines) shown.push(JSON.parse(line) as Record<string, unknown>);
        }
      } finally {
        if (proc) (proc as Proc).child.kill("SIGKILL");
      }
      const context = `seed ${SEED} (replay: CRASH_SEED=${SEED} npx vitest run test/crash)`;
      // The model never received a malformed history.
      expect(
        fake.rejected().map((c) => c.error),
        context,
      ).toEqual([]);
      // No reply was shown twice.
      const ids = shown.map((l) => l.id).filter(Boolean);
      expect(ids.length - new Set(ids).size, `${context}: replies shown twice`).toBe(0);
      // No side effect ran twice: each booking reached the ledger at most once.
      expect(
        [...posts.values()].filter((n) => n > 1),
        `${context}: bookings made twice`,
      ).toEqual([]);
      // No user message lost or processed twice: each reached the model's log exactly once.
      const store = new SqliteStore(join(env.DATA_DIR, "switchboard.db"));
      for (let c = 1; c <= conversations; c++) {
        const log = await store.steps.log(`console:c${c}`);
        const said = log
          .filter((e) => e.type === "message" && (e.payload as { role: string }).role === "user")
          .map((e) => JSON.stringify((e.payload as { content: unknown }).content));
        for (const message of ["plan a trip", `Lisbon (c${c})`]) {
          expect(said.filter((t) => t.includes(message)).length, `${context}: c${c} lost or doubled "${message}"`).toBe(1);
        }
        expect(await store.tasks.active(`console:c${c}`), `${context}: c${c} left a task open`).toBeNull();
        expect(await store.steps.openAgentSessions(`console:c${c}`), `${context}: c${c} left an agent session open`).toEqual([]);
      }
      // Every stack read right after a kill could be loaded back (what a restart loads).
      expect(
        stacksAtKill.every((s) => !s.startsWith("error")),
        `${context}: ${stacksAtKill.find((s) => s.startsWith("error"))}`,
      ).toBe(true);
      await store.close();
      rmSync(defs.root, { recursive: true, force: true });
      expect(kills).toBeGreaterThanOrEqual(KILLS);
      // However few the kills, they landed at each kind of point: waiting for the model, inside the side-effecting
      // tool, and right after a reply was shown.
      if (KILLS >= 10) expect([...killedAt].sort(), context).toEqual(["model", "reply", "tool"]);
    },
    Math.max(120_000, KILLS * 6_000),
  );
});

/** The stacks as a restart would load them (via the product's own loader), or an error. */
async function storedStackNames(dataDir: string): Promise<string> {
  try {
    const store = new SqliteStore(join(dataDir, "switchboard.db"));
    try {
      const db = new Database(join(dataDir, "switchboard.db"), { readonly: true });
      const keys = (db.prepare("SELECT DISTINCT session_key AS k FROM frames").all() as Array<{ k: string }>).map((r) => r.k);
      db.close();
      const stacks: string[] = [];
      for (const k of keys) stacks.push(`${k}: ${(await store.steps.frames(k)).map((f) => f.agentName).join(" → ")}`);
      return stacks.join("; ");
    } finally {
      await store.close();
    }
  } catch (error) {
    return `error: ${error instanceof Error ? error.message : String(error)}`;
  }
}
