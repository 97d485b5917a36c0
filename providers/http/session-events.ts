import type { IncomingMessage, ServerResponse } from "node:http";
import type { Timers } from "../../src/runtime/deps.js";
import { parseRunExternalId } from "../../src/gateway/index.js";
import type { ApiReads, RequestRecord, StoreChange } from "../../src/gateway/index.js";
import { outboundView } from "./request.js";

// GET /v1/sessions/{id}/events: what happens in one session while the client listens, whoever started it: a
// message sent from elsewhere, and the turns the bot starts by itself (a scheduled job's run). Each request shows
// as `request` when it is stored, then its deltas, stack changes and replies, then `done`. Read from the store's
// change feed, like a POST's stream, so any replica serves it; it ends when the client closes it.

export interface SessionStreamOptions {
  store: ApiReads;
  timers: Timers;
  keepaliveMs: number;
}

/** A scheduled job's run, as the API names it: the job and the due time the run is for. */
export function scheduledView(request: Pick<RequestRecord, "externalId">): { job_id: string; due_at: string } | null {
  const run = parseRunExternalId(request.externalId);
  return run ? { job_id: run.jobId, due_at: new Date(run.due).toISOString() } : null;
}

function requestEvent(request: RequestRecord) {
  return { request_id: request.id, task_id: request.taskId, kind: request.kind, status: request.status, scheduled: scheduledView(request) };
}

/** Streams the session's events until the client goes away; resolves then. */
export function streamSession(req: IncomingMessage, res: ServerResponse, sessionKey: string, options: SessionStreamOptions): Promise<void> {
  const { store, timers } = options;
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive", "x-accel-buffering": "no" });
  res.flushHeaders();
  const send = (event: string, data: unknown) => void res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  const sent = new Set<string>();
  // Reads happen one after another, so events go out in the order their changes came.
  let chain: Promise<void> = Promise.resolve();
  const later = (work: () => Promise<void>) => {
    chain = chain.then(work).catch(() => {}); // a failed read skips that event; the client can read the session back
  };
  const replies = (requestId: string) =>
    later(async () => {
      for (const reply of await store.replies(requestId)) {
        if (sent.has(reply.id)) continue;
        sent.add(reply.id);
        send(reply.approvalId ? "approval" : "message", { ...outboundView(reply), request_id: requestId });
      }
    });
  const request = (event: "request" | "done", requestId: string) =>
    later(async () => {
      const found = await store.request(requestId);
      if (found) send(event, requestEvent(found));
    });
  const heard = (change: StoreChange) => {
    if (change.sessionKey !== sessionKey) return;
    switch (change.kind) {
      case "request":
        return request("request", change.requestId);
      case "done":
        // Replies committed with the end of the request go out before its `done`.
        replies(change.requestId);
        return request("done", change.requestId);
      case "outbound":
        for (const id of change.requestIds) if (id !== null) replies(id);
        return;
      case "stack":
        return later(async () => send("stack", change.event));
      case "delta":
      case "reset":
        return later(async () => send(change.kind, { ...change.event, request_id: change.requestId ?? null }));
    }
  };
  const unwatch = store.watch(heard);
  let keepalive: unknown;
  const beat = () => {
    res.write(": keepalive\n\n");
    keepalive = timers.setTimeout(beat, options.keepaliveMs);
  };
  keepalive = timers.setTimeout(beat, options.keepaliveMs);
  return new Promise<void>((resolve) => {
    const end = () => {
      unwatch();
      timers.clearTimeout(keepalive);
      resolve();
    };
    req.once("close", end);
    res.once("close", end);
  });
}
