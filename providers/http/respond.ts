import type { ServerResponse } from "node:http";

/** A JSON response; once a stream's headers went out, the response only ends. */
export function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (res.headersSent) return void res.end();
  res.writeHead(status, { ...headers, "content-type": "application/json", "x-content-type-options": "nosniff" }).end(JSON.stringify(body));
}
