import { Ajv, type ErrorObject, type ValidateFunction } from "ajv";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";

// JSON Schema from admins and models (output_schema), compiled with Ajv: draft-07 by default, 2020-12 when
// the schema's $schema says so, with the standard formats (email, date-time, uri, …).

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;
const draft07 = addFormats(new Ajv({ allErrors: true, strict: false }));
const draft2020 = addFormats(new Ajv2020({ allErrors: true, strict: false }) as unknown as Ajv);
const compiled = new Map<string, ValidateFunction>();

export type SchemaCheck = { ok: true; validate: ValidateFunction } | { ok: false; error: string };

/** Compiles an output_schema; a problem comes back as one sentence naming what is wrong. */
export function compileOutputSchema(schema: unknown): SchemaCheck {
  if (typeof schema !== "object" || schema === null || Array.isArray(schema)) {
    return { ok: false, error: "output_schema must be a JSON Schema object" };
  }
  const record = schema as Record<string, unknown>;
  if (record.type !== "object") {
    return {
      ok: false,
      error: `output_schema must describe an object (top-level "type": "object"), got ${JSON.stringify(record.type ?? null)}; tool arguments are always objects, so wrap the value in a property`,
    };
  }
  const key = JSON.stringify(schema);
  const cached = compiled.get(key);
  if (cached) return { ok: true, validate: cached };
  const is2020 = typeof record.$schema === "string" && record.$schema.includes("2020-12");
  try {
    const validate = (is2020 ? draft2020 : draft07).compile(record);
    if (compiled.size > 500) compiled.clear();
    compiled.set(key, validate);
    return { ok: true, validate };
  } catch (error) {
    return { ok: false, error: `output_schema is not a valid JSON Schema: ${error instanceof Error ? error.message : String(error)}` };
  }
}

/** Every violation as `path: message`, e.g. `/email: must match format "email"`. */
export function describeViolations(errors: readonly ErrorObject[] | null | undefined): string[] {
  return (errors ?? []).map((e) => {
    const path = e.instancePath || "(root)";
    const extra = e.keyword === "additionalProperties" ? ` (${String((e.params as { additionalProperty?: string }).additionalProperty)})` : "";
    return `${path}: ${e.message ?? "is invalid"}${extra}`;
  });
}
