import { z } from "zod";
import type { Egress } from "../../net/egress.js";
import { isWrite, requestedMethods } from "../../net/methods.js";
import { shorten } from "../approval-prompt.js";
import { fail, type Tool, type ToolOutput } from "./tool.js";

const MAX_REQUEST_BODY = 100 * 1024;

const input = z.object({
  method: z.enum(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"]).default("GET"),
  // Any string: the egress guard refuses non-http(s) URLs with a message that also covers redirects.
  url: z.string().min(1),
  headers: z.record(z.string(), z.string()).optional(),
  body: z.string().max(MAX_REQUEST_BODY).optional(),
});

const readOnly = (raw: Record<string, unknown>) => !isWrite(raw.method, raw.headers);

/** The method as the server will see it: the request's own, and any override header's ("POST as DELETE"). */
function methodOf(raw: Record<string, unknown>): string {
  const [own, ...overrides] = requestedMethods(raw.method, raw.headers).map((m) => shorten(m, 20));
  return overrides.length > 0 ? `${own} as ${overrides.join(" and ")}` : own!;
}

/** The URL with its scheme and host whole (where the call goes) and only its path and query shortened. */
function urlOf(raw: unknown): string {
  if (typeof raw !== "string") return `(url is not a string: ${shorten(JSON.stringify(raw) ?? String(raw), 60)})`;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return shorten(raw, 200);
  }
  if (!url.host) return shorten(raw, 200);
  // The host as the request will use it (an internationalised name in its punycode form, so look-alikes show).
  const credentials = url.username || url.password ? " (with credentials)" : "";
  return `${url.protocol}//${url.host}${shorten(`${url.pathname}${url.search}${url.hash}`, 150)}${credentials}`;
}

/**
 * An HTTP call through the egress guard. Reading (GET, HEAD) runs at once; anything that can change something
 * elsewhere (POST, PUT, PATCH, DELETE, or a read carrying a method-override header) waits for the owner's approval.
 */
export function createHttpRequestTool(egress: Egress): Tool {
  return {
    spec: {
      name: "http_request",
      description:
        "Make an HTTP request to a public http(s) URL. GET and HEAD run at once; POST, PUT, PATCH and DELETE (also when " +
        "named in an X-HTTP-Method-Override header) first ask the user to approve. Private, loopback and link-local " +
        `addresses are refused. Returns the status and up to ${egress.maxBytes} bytes of the body.`,
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
    approvalTarget: (raw) => ({ text: `${methodOf(raw)} ${urlOf(raw.url)}`, fields: ["method", "url"] }),
    async run(raw, ctx): Promise<ToolOutput> {
      const parsed = input.safeParse({ ...raw, ...(typeof raw.method === "string" ? { method: raw.method.toUpperCase() } : {}) });
      if (!parsed.success) {
        const issue = parsed.error.issues[0]!;
        return fail(`http_request: ${issue.path.join(".") || "input"} ${issue.message}`);
      }
      const { method, url, headers, body } = parsed.data;
      const result = await egress.request({ method, url, ...(headers ? { headers } : {}), ...(body !== undefined ? { body } : {}), signal: ctx.signal });
      switch (result.outcome) {
        case "response":
          return { content: `HTTP ${result.status} ${result.statusText}\n${result.body}`.trim(), isError: result.status >= 400 };
        case "redirect_needs_approval":
          return {
            content:
              `HTTP ${result.status} ${result.statusText}\nThe server redirected this ${method} request to ${result.location}, another origin, ` +
              `so it was not followed. Calling http_request again with that URL needs a new approval.`,
          };
        case "refused":
          return fail(`http_request refused: ${result.reason}`);
        case "failed":
          return fail(`http_request to ${url} failed: ${result.reason}`);
        default: {
          const never: never = result;
          throw new Error(`unhandled egress outcome ${JSON.stringify(never)}`);
        }
      }
    },
  };
}
