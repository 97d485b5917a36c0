import { z } from "zod";
import { fail, type Tool, type ToolOutput } from "./tool.js";

const MAX_BODY = 100 * 1024;
const TIMEOUT_MS = 15_000;

const input = z.object({
  method: z.enum(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"]).default("GET"),
  url: z.url({ protocol: /^https?$/ }),
  headers: z.record(z.string(), z.string()).optional(),
  body: z.string().max(MAX_BODY).optional(),
});

const readOnly = (raw: Record<string, unknown>) => {
  const method = typeof raw.method === "string" ? raw.method.toUpperCase() : "GET";
  return method === "GET" || method === "HEAD";
};

/**
 * An HTTP call. Reading (GET, HEAD) runs at once; anything that can change something elsewhere (POST, PUT,
 * PATCH, DELETE) waits for the owner's approval. The response is cut at 100 KB.
 */
export const httpRequestTool: Tool = {
  spec: {
    name: "http_request",
    description:
      "Make an HTTP request. GET and HEAD run at once; POST, PUT, PATCH and DELETE first ask the user to approve. Returns the status and up to 100 KB of the body.",
    input_schema: {
      type: "object",
      properties: {
        method: { type: "string", enum: ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"] },
        url: { type: "string", description: "An http(s) URL." },
        headers: { type: "object", additionalProperties: { type: "string" } },
        body: { type: "string", description: "Request body (at most 100 KB)." },
      },
      required: ["url"],
    },
  },
  idempotent: readOnly,
  requiresApproval: (raw) => !readOnly(raw),
  async run(raw, ctx): Promise<ToolOutput> {
    const parsed = input.safeParse({ ...raw, ...(typeof raw.method === "string" ? { method: raw.method.toUpperCase() } : {}) });
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      return fail(`http_request: ${issue.path.join(".") || "input"} ${issue.message}`);
    }
    const { method, url, headers, body } = parsed.data;
    try {
      const response = await fetch(url, {
        method,
        ...(headers ? { headers } : {}),
        ...(body !== undefined && method !== "GET" && method !== "HEAD" ? { body } : {}),
        signal: AbortSignal.any([ctx.signal, AbortSignal.timeout(TIMEOUT_MS)]),
        redirect: "follow",
      });
      const text = method === "HEAD" ? "" : await response.text();
      const cut = text.length > MAX_BODY ? `${text.slice(0, MAX_BODY)}\n[truncated at 100 KB]` : text;
      return { content: `HTTP ${response.status} ${response.statusText}\n${cut}`.trim(), isError: response.status >= 400 };
    } catch (error) {
      return fail(`http_request to ${url} failed: ${error instanceof Error ? error.message : String(error)}`);
    }
  },
};
