import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { ServerConfig } from "./config.js";
import { serverEnvironment, StdioTransport, type StdioOptions } from "./stdio.js";

// One transport per connection attempt, from the server's entry. The URL of an HTTP server is the admin's choice, not
// the model's: it does not go through the egress guard (which refuses loopback and private addresses), but its
// answers are read within the same byte limit as a stdio server's lines.

export interface TransportOptions extends StdioOptions {
  /** The gateway's environment, of which a stdio server gets PATH and HOME only. */
  env?: Readonly<Record<string, string | undefined>>;
}

export function createTransport(server: ServerConfig, options: TransportOptions): Transport {
  switch (server.transport) {
    case "stdio":
      return new StdioTransport(
        {
          server: server.name,
          sandbox: server.sandbox,
          command: server.command,
          args: server.args,
          // In the sandbox, PATH and HOME are the sandbox's own: nothing of the gateway's environment goes in.
          env: server.sandbox ? { ...server.env } : serverEnvironment(server.env, options.env),
          cwd: server.cwd,
        },
        options,
      );
    case "http":
      return new StreamableHTTPClientTransport(new URL(server.url), { requestInit: { headers: server.headers }, fetch: boundedFetch(options.maxMessageBytes) });
    case "sse":
      return new SSEClientTransport(new URL(server.url), { requestInit: { headers: server.headers }, fetch: boundedFetch(options.maxMessageBytes) });
  }
}

/**
 * fetch, with a JSON answer read only up to `maxBytes` (a longer one fails the request). Event streams are left to
 * the SDK: they stay open for the connection's life, each event is small.
 */
export function boundedFetch(maxBytes: number): (url: string | URL, init?: RequestInit) => Promise<Response> {
  return async (url, init) => {
    const response = await fetch(url, init);
    if (!response.body || !(response.headers.get("content-type") ?? "").includes("json")) return response;
    const declared = Number(response.headers.get("content-length") ?? NaN);
    if (declared > maxBytes) {
      await response.body.cancel();
      throw new Error(`the server's answer is ${declared} bytes, more than the ${maxBytes} allowed`);
    }
    const chunks: Uint8Array[] = [];
    let total = 0;
    for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
      total += chunk.byteLength;
      if (total > maxBytes) throw new Error(`the server's answer is more than the ${maxBytes} bytes allowed`);
      chunks.push(chunk);
    }
    return new Response(Buffer.concat(chunks), { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}
