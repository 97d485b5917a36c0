import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import type { Timers } from "../runtime/deps.js";
import { RawCallResult } from "./result.js";

// One tools/call. The time limit is kept here, with the injected timers, rather than by the SDK (whose timer is real):
// a progress notification starts it again, up to a cap, and when it runs out, or the turn is cancelled (/cancel,
// shutdown), the request's signal is aborted, on which the SDK sends the server notifications/cancelled.

/** How a call ended. `lost`: the connection failed under it (the server died, the HTTP session is gone). */
export type CallOutcome =
  | { kind: "result"; result: RawCallResult }
  | { kind: "timeout"; afterMs: number }
  | { kind: "cancelled" }
  | { kind: "error"; message: string; lost: boolean };

export interface CallLimits {
  timers: Timers;
  now: () => number;
  /** Without an answer or a progress notification for this long, the call is cancelled. */
  timeoutMs: number;
  /** Progress keeps a call alive up to this long in all. */
  maxTotalMs: number;
}

/** The SDK's own timeout, set out of the way (its largest setTimeout): the limit is ours. */
const SDK_TIMEOUT = 2_147_483_647;

export async function callTool(client: Client, name: string, args: Record<string, unknown>, signal: AbortSignal, limits: CallLimits): Promise<CallOutcome> {
  const { timers, now, timeoutMs, maxTotalMs } = limits;
  if (signal.aborted) return { kind: "cancelled" };
  const abort = new AbortController();
  const started = now();
  let timedOut = false;
  const expire = () => {
    timedOut = true;
    abort.abort(`no answer within ${timeoutMs} ms`);
  };
  let timer = timers.setTimeout(expire, timeoutMs);
  const cancel = () => abort.abort("the turn was cancelled");
  signal.addEventListener("abort", cancel, { once: true });
  const onprogress = () => {
    if (abort.signal.aborted) return;
    timers.clearTimeout(timer);
    timer = timers.setTimeout(expire, Math.max(0, Math.min(timeoutMs, started + maxTotalMs - now())));
  };
  try {
    const result = await client.request({ method: "tools/call", params: { name, arguments: args } }, RawCallResult, {
      signal: abort.signal,
      timeout: SDK_TIMEOUT,
      onprogress,
    });
    return { kind: "result", result };
  } catch (error) {
    if (timedOut) return { kind: "timeout", afterMs: now() - started };
    if (signal.aborted) return { kind: "cancelled" };
    return { kind: "error", message: describe(error), lost: connectionLost(error) };
  } finally {
    timers.clearTimeout(timer);
    signal.removeEventListener("abort", cancel);
  }
}

/** Whether an error means the connection is gone (so the server is reconnected), not that the call failed. */
export function connectionLost(error: unknown): boolean {
  if (error instanceof McpError) return error.code === ErrorCode.ConnectionClosed;
  // An answer of the wrong shape (a zod error) came over a working connection.
  if (error instanceof Error && "issues" in error) return false;
  // An HTTP server that forgot the session answers 404: a new one is needed. Other statuses are the call's failure.
  if (error instanceof StreamableHTTPError) return error.code === 404 || error.code === undefined;
  return true;
}

export function describe(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const cause = error instanceof Error && error.cause instanceof Error ? ` (${error.cause.message})` : "";
  return `${message}${cause}`.slice(0, 1000);
}
