import { parentPort } from "node:worker_threads";
import { SchemaCompiler } from "./json-schema.js";
import type { SchemaRequest, SchemaResponse } from "./schema-checker.js";

// The schema worker: compiles output_schemas and checks results against them, one request at a time, off the
// gateway's event loop. The gateway stops it when a request runs past its time limit and starts another.

const compiler = new SchemaCompiler();
const port = parentPort!;

port.on("message", (request: SchemaRequest) => {
  let response: SchemaResponse;
  try {
    if (request.op === "compile") {
      const compiled = compiler.compile(request.schema);
      response = { id: request.id, result: compiled.ok ? { ok: true } : { ok: false, error: compiled.error } };
    } else {
      response = { id: request.id, result: compiler.check(request.schema, request.value) };
    }
  } catch (error) {
    // A bug, or a stack overflow in generated code: the request fails, the worker lives on.
    const message = `output_schema could not be checked: ${error instanceof Error ? error.message : String(error)}`;
    response = { id: request.id, result: request.op === "compile" ? { ok: false, error: message } : { ok: false, violations: [message] } };
  }
  port.postMessage(response);
});
port.postMessage({ ready: true });
