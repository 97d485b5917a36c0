import { Ajv, type ErrorObject, type ValidateFunction } from "ajv";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import { inspectSchema, valueLimitProblem, type SchemaInspection } from "./schema-limits.js";
import { re2RegExp } from "./schema-regexp.js";

// JSON Schema from admins and models (output_schema), compiled with Ajv: draft-07 by default, 2020-12 when
// the schema's $schema says so, with the standard formats (email, date-time, uri, …). Bounded cost: the limits in
// schema-limits.ts come first, patterns run on RE2 (schema-regexp.ts), and uniqueItems compares items by a canonical
// text instead of each pair. This is the work itself; the gateway runs it on a worker thread (schema-checker.ts).

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

export type SchemaCheck = { ok: true; validate: ValidateFunction } | { ok: false; error: string };
export type ValueCheck = { ok: true } | { ok: false; violations: string[] };

/**
 * What can be said of an output_schema without compiling it: an object schema, within the limits, valid against its
 * meta-schema. Cheap (linear in the schema's size, which is capped), so the catalog loader runs it on the main thread;
 * compiling, which is not cheap, happens on the schema worker.
 */
export function outputSchemaProblem(schema: unknown): string | null {
  return examine(schema).problem;
}

/**
 * The same without the meta-schema (whose validator is itself compiled with Ajv on first use): what the gateway
 * checks on the main thread before a schema goes to the worker, which checks the rest.
 */
export function schemaShapeProblem(schema: unknown): string | null {
  return examine(schema, false).problem;
}

function examine(schema: unknown, meta = true): SchemaInspection {
  const refuse = (problem: string): SchemaInspection => ({ problem, patterns: [] });
  if (typeof schema !== "object" || schema === null || Array.isArray(schema)) return refuse("output_schema must be a JSON Schema object");
  const record = schema as Record<string, unknown>;
  if (record.type !== "object") {
    return refuse(
      `output_schema must describe an object (top-level "type": "object"), got ${JSON.stringify(record.type ?? null)}; tool arguments are always objects, so wrap the value in a property`,
    );
  }
  const inspected = inspectSchema(schema);
  if (inspected.problem || !meta) return inspected;
  const ajv = metaSchemas.get(is2020(record));
  try {
    if (!ajv.validateSchema(record)) return refuse(`output_schema is not a valid JSON Schema: schema is invalid: ${ajv.errorsText(ajv.errors)}`);
  } catch (error) {
    return refuse(`output_schema is not a valid JSON Schema: ${error instanceof Error ? error.message : String(error)}`);
  }
  return inspected;
}

function is2020(schema: Record<string, unknown>): boolean {
  return typeof schema.$schema === "string" && schema.$schema.includes("2020-12");
}

/** Validators of schemas themselves (the draft's meta-schema): built once, they never change. */
const metaSchemas = {
  instances: new Map<boolean, Ajv>(),
  get(draft2020: boolean): Ajv {
    let ajv = this.instances.get(draft2020);
    if (!ajv) this.instances.set(draft2020, (ajv = createAjv(draft2020)));
    return ajv;
  },
};

/** One compiler per thread (the schema worker's): Ajv instances and what they compiled. */
export class SchemaCompiler {
  /** Created on first use: `npm run skills -- validate` makes one whether or not any definition has a schema. */
  private readonly instances = new Map<boolean, Ajv>();
  private readonly compiled = new Map<string, { validate: ValidateFunction; ajv: Ajv; schema: object }>();

  /** Compiles an output_schema; a problem comes back as one sentence naming what is wrong and where. */
  compile(schema: unknown): SchemaCheck {
    const key = typeof schema === "object" && schema !== null ? JSON.stringify(schema) : "";
    const cached = this.compiled.get(key);
    if (cached) {
      // Most recently used last: the oldest entry is the one dropped.
      this.compiled.delete(key);
      this.compiled.set(key, cached);
      return { ok: true, validate: cached.validate };
    }
    const examined = examine(schema);
    if (examined.problem) return { ok: false, error: examined.problem };
    for (const { pattern, at } of examined.patterns) {
      try {
        re2RegExp(pattern);
      } catch (error) {
        return { ok: false, error: `output_schema: ${at}: ${(error as Error).message}` };
      }
    }
    const draft2020 = is2020(schema as Record<string, unknown>);
    let ajv = this.instances.get(draft2020);
    if (!ajv) this.instances.set(draft2020, (ajv = createAjv(draft2020)));
    // A copy without $id: Ajv registers schemas by $id, and two calls may well use the same one.
    const { $id: _id, ...own } = JSON.parse(key) as Record<string, unknown>;
    try {
      const validate = ajv.compile(own);
      this.remember(key, { validate, ajv, schema: own });
      return { ok: true, validate };
    } catch (error) {
      return { ok: false, error: `output_schema is not a valid JSON Schema: ${error instanceof Error ? error.message : String(error)}` };
    }
  }

  /** Checks `value` against `schema`: ok, or every violation as `path: message`. */
  check(schema: unknown, value: unknown): ValueCheck {
    const compiled = this.compile(schema);
    if (!compiled.ok) return { ok: false, violations: [compiled.error] };
    const tooBig = valueLimitProblem(value);
    if (tooBig) return { ok: false, violations: [tooBig] };
    if (compiled.validate(value)) return { ok: true };
    return { ok: false, violations: describeViolations(compiled.validate.errors) };
  }

  private remember(key: string, entry: { validate: ValidateFunction; ajv: Ajv; schema: object }): void {
    this.compiled.set(key, entry);
    if (this.compiled.size <= CACHED) return;
    const [oldest, dropped] = this.compiled.entries().next().value!;
    this.compiled.delete(oldest);
    // Ajv keeps every schema it compiled until told otherwise.
    dropped.ajv.removeSchema(dropped.schema);
  }
}

const CACHED = 200;

/** Ajv's own console warnings (an unknown format) are off: the caller reports what matters. */
const OPTIONS = { allErrors: true, strict: false, logger: false as const, code: { regExp: re2RegExp } };

function createAjv(draft2020: boolean): Ajv {
  const ajv = draft2020 ? (new Ajv2020(OPTIONS) as unknown as Ajv) : new Ajv(OPTIONS);
  addFormats(ajv);
  // Ajv compares every pair of items unless their type is a scalar: 20 000 objects took 20 s.
  ajv.removeKeyword("uniqueItems");
  ajv.addKeyword({ keyword: "uniqueItems", type: "array", schemaType: "boolean", errors: true, validate: uniqueItems });
  return ajv;
}

interface KeywordFunction {
  (schema: boolean, data: unknown[]): boolean;
  errors?: Array<Partial<ErrorObject>>;
}

/** Each item as canonical JSON (keys sorted) in a map: one pass. The message is Ajv's. */
const uniqueItems: KeywordFunction = (unique, data) => {
  uniqueItems.errors = [];
  if (!unique || data.length < 2) return true;
  const seen = new Map<string, number>();
  for (let i = data.length - 1; i >= 0; i--) {
    const text = canonical(data[i]);
    const j = seen.get(text);
    if (j !== undefined) {
      uniqueItems.errors = [{ keyword: "uniqueItems", message: `must NOT have duplicate items (items ## ${j} and ${i} are identical)`, params: { i, j } }];
      return false;
    }
    seen.set(text, i);
  }
  return true;
};

function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (typeof value === "object" && value !== null) {
    const keys = Object.keys(value).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

/** Every violation as `path: message`, e.g. `/email: must match format "email"`. */
export function describeViolations(errors: readonly ErrorObject[] | null | undefined): string[] {
  return (errors ?? []).map((e) => {
    const path = e.instancePath || "(root)";
    const extra = e.keyword === "additionalProperties" ? ` (${String((e.params as { additionalProperty?: string }).additionalProperty)})` : "";
    return `${path}: ${e.message ?? "is invalid"}${extra}`;
  });
}
