import { createRequire } from "node:module";
import { readFileSync } from "node:fs";
import { dirname, extname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { Worker } from "node:worker_threads";
import type { Logger } from "pino";
import { SchemaCompiler, schemaShapeProblem, type ValueCheck } from "./json-schema.js";
import { valueLimitProblem } from "./schema-limits.js";

// Compiling a JSON Schema and checking a value against it can cost far more than the text's size suggests (nested
// combinators, long values, Ajv's own code generation), and both the schema and the value may come from a model.
// The gateway does both on a worker thread, one request at a time, each under a time limit: a request that runs
// over it is answered with an error and the worker is replaced, so no schema ever holds the event loop.

export type CompileResult = { ok: true } | { ok: false; error: string };
export type CheckResult = ValueCheck;

export interface SchemaChecker {
  /** Whether `schema` can be used as an output_schema; the error is one sentence naming what is wrong and where. */
  compile(schema: unknown): Promise<CompileResult>;
  /** Checks a result against its output_schema: ok, or every violation as `path: message`. */
  check(schema: unknown, value: unknown): Promise<CheckResult>;
  close(): Promise<void>;
}

/** Timers as the runtime injects them (the simulation's are virtual). */
export interface SchemaTimers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export interface SchemaWorkerOptions {
  timers: SchemaTimers;
  log?: Logger;
  /** One request's time on the worker, once the worker is up. Default 2000 ms. */
  timeLimitMs?: number;
  /** How long a new worker may take to load. Default 30 000 ms. */
  startLimitMs?: number;
  /** The worker's heap. Default 128 MB. */
  memoryMb?: number;
}

export type SchemaRequest = { id: number; op: "compile"; schema: unknown } | { id: number; op: "check"; schema: unknown; value: unknown };
export type SchemaResponse = { id: number; result: CompileResult | CheckResult };

type Job = { request: SchemaRequest; resolve: (result: CompileResult | CheckResult) => void; timer?: unknown };

/** The same checks in the calling thread: for `npm run skills -- validate` and the deterministic simulation. */
export class InlineSchemaChecker implements SchemaChecker {
  private readonly compiler = new SchemaCompiler();

  compile(schema: unknown): Promise<CompileResult> {
    const compiled = this.compiler.compile(schema);
    return Promise.resolve(compiled.ok ? { ok: true } : { ok: false, error: compiled.error });
  }

  check(schema: unknown, value: unknown): Promise<CheckResult> {
    return Promise.resolve(this.compiler.check(schema, value));
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}

/** The gateway's checker: a worker thread, started on first use, replaced when a request overruns or it dies. */
export class WorkerSchemaChecker implements SchemaChecker {
  private worker: { thread: Worker; ready: boolean; startTimer: unknown } | null = null;
  private readonly queue: Job[] = [];
  private current: Job | null = null;
  private nextId = 1;
  private closed = false;
  private readonly timeLimitMs: number;

  constructor(private readonly options: SchemaWorkerOptions) {
    this.timeLimitMs = options.timeLimitMs ?? 2000;
  }

  compile(schema: unknown): Promise<CompileResult> {
    // What is cheap to see is refused here, before anything is copied to the worker.
    const problem = schemaShapeProblem(schema);
    if (problem) return Promise.resolve({ ok: false, error: problem });
    return this.submit({ id: this.nextId++, op: "compile", schema }) as Promise<CompileResult>;
  }

  check(schema: unknown, value: unknown): Promise<CheckResult> {
    const problem = schemaShapeProblem(schema) ?? valueLimitProblem(value);
    if (problem) return Promise.resolve({ ok: false, violations: [problem] });
    return this.submit({ id: this.nextId++, op: "check", schema, value }) as Promise<CheckResult>;
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.queue.splice(0)) job.resolve(failure(job.request, "the gateway is shutting down"));
    if (this.current) this.finish(failure(this.current.request, "the gateway is shutting down"));
    await this.stop();
  }

  private submit(request: SchemaRequest): Promise<CompileResult | CheckResult> {
    if (this.closed) return Promise.resolve(failure(request, "the gateway is shutting down"));
    return new Promise((resolve) => {
      this.queue.push({ request, resolve });
      this.pump();
    });
  }

  /** Sends the next request when the worker is up and idle; starts the worker when there is none. */
  private pump(): void {
    if (this.closed || this.current || this.queue.length === 0) return;
    if (!this.worker) this.start();
    if (!this.worker?.ready) return;
    const job = this.queue.shift()!;
    this.current = job;
    const { timers } = this.options;
    job.timer = timers.setTimeout(() => {
      if (this.current !== job) return;
      const seconds = `${this.timeLimitMs / 1000} s`;
      this.options.log?.warn({ op: job.request.op, limitMs: this.timeLimitMs }, "a JSON Schema request ran past its time limit; the schema worker was replaced");
      this.finish(
        job.request.op === "compile"
          ? { ok: false, error: `output_schema took longer than ${seconds} to compile, so it was refused; make it smaller or simpler` }
          : {
              ok: false,
              violations: [`checking the result against output_schema took longer than ${seconds}, so it was not accepted; a smaller or simpler result may pass`],
            },
      );
      void this.stop();
    }, this.timeLimitMs);
    this.worker.thread.postMessage(job.request);
  }

  private start(): void {
    const thread = new Worker(WORKER_SOURCE, { eval: true, resourceLimits: { maxOldGenerationSizeMb: this.options.memoryMb ?? 128 } });
    thread.unref();
    const startLimitMs = this.options.startLimitMs ?? 30_000;
    const startTimer = this.options.timers.setTimeout(() => this.died(thread, new Error(`it did not start within ${startLimitMs / 1000} s`)), startLimitMs);
    const worker = { thread, ready: false, startTimer };
    this.worker = worker;
    thread.on("message", (message: SchemaResponse | { ready: true }) => {
      if (this.worker !== worker) return;
      if ("ready" in message) {
        this.options.timers.clearTimeout(startTimer);
        worker.ready = true;
      } else if (this.current?.request.id === message.id) {
        this.finish(message.result);
      }
      this.pump();
    });
    thread.on("error", (error) => this.died(thread, error));
    thread.on("exit", (code) => this.died(thread, new Error(`it exited with code ${code}`)));
  }

  /** The worker failed (out of memory, a load error): the request it held fails, the next one gets a new worker. */
  private died(thread: Worker, error: Error): void {
    if (this.worker?.thread !== thread) return;
    const ready = this.worker.ready;
    this.options.timers.clearTimeout(this.worker.startTimer);
    this.worker = null;
    void thread.terminate();
    const outOfMemory = (error as NodeJS.ErrnoException).code === "ERR_WORKER_OUT_OF_MEMORY";
    const why = outOfMemory ? `it needed more than the ${this.options.memoryMb ?? 128} MB allowed` : `the schema worker failed: ${error.message}`;
    this.options.log?.warn({ err: error }, `the schema worker stopped (${why})`);
    if (this.current) this.finish(failure(this.current.request, why));
    // A worker that never came up fails what waits for it, rather than being restarted in a loop.
    if (!ready) for (const job of this.queue.splice(0)) job.resolve(failure(job.request, why));
    this.pump();
  }

  private finish(result: CompileResult | CheckResult): void {
    const job = this.current!;
    this.current = null;
    if (job.timer !== undefined) this.options.timers.clearTimeout(job.timer);
    job.resolve(result);
  }

  private async stop(): Promise<void> {
    const worker = this.worker;
    this.worker = null;
    if (!worker) return;
    this.options.timers.clearTimeout(worker.startTimer);
    await worker.thread.terminate();
    this.pump();
  }
}

function failure(request: SchemaRequest, why: string): CompileResult | CheckResult {
  const message = `output_schema could not be checked: ${why}`;
  return request.op === "compile" ? { ok: false, error: message } : { ok: false, violations: [message] };
}

// The worker runs the same source as this file: TypeScript through tsx's loader (npm start, the tests), or JavaScript
// once built. Node 20 does not apply the parent's loader to a worker, so the worker registers it itself.
const EXTENSION = extname(fileURLToPath(import.meta.url));
const WORKER_URL = new URL(`./schema-worker${EXTENSION}`, import.meta.url).href;
const TSX_API = EXTENSION === ".ts" ? tsxEsmApi() : null;
const WORKER_SOURCE = TSX_API
  ? `import(${JSON.stringify(TSX_API)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(WORKER_URL)}); });`
  : `import(${JSON.stringify(WORKER_URL)});`;

/** tsx's ESM API (`tsx/esm/api` under the import condition), which require.resolve would not pick. */
function tsxEsmApi(): string {
  const manifest = createRequire(import.meta.url).resolve("tsx/package.json");
  const exported = (JSON.parse(readFileSync(manifest, "utf8")) as { exports: Record<string, { import: { default: string } }> }).exports["./esm/api"]!;
  return pathToFileURL(join(dirname(manifest), exported.import.default)).href;
}
