// A fake of Slack's Socket Mode endpoint, attached to the Web API fake (server.ts).
//
// The app calls apps.connections.open with its app-level (xapp-) token and
// gets `ws://127.0.0.1:<port>/link/?ticket=…&app_id=…`; each ticket opens one
// connection. On connect the fake sends `hello`; tests then push envelopes
// (events_api, slash_commands, interactive) whose payloads come from the same
// builders as HTTP mode's (events.ts), so both modes see identical bodies.
// The client acknowledges each with `{ envelope_id, payload? }`; acks are
// recorded and awaitable. An envelope not acked when its connection closes is
// sent again on the next one with retry_attempt + 1, as Slack retries. A
// `disconnect` message (refresh_requested, warning, link_disabled) tells the
// client to go and fetch a new URL.
//
// Anything the client sends that Slack would not accept (not JSON, no or an
// unknown envelope_id, a spent ticket) is recorded in errors(); tests expect
// it empty.

import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import type { Duplex } from "node:stream";
import { WebSocketServer, type RawData, type WebSocket } from "ws";
import { isRecord } from "./common.js";
import { eventCallback, slashCommand } from "./events.js";
import { APP_ID } from "./methods.js";
import type { FakeSlack } from "./server.js";

export type EnvelopeType = "events_api" | "slash_commands" | "interactive";
export type DisconnectReason = "refresh_requested" | "warning" | "link_disabled";

/** One message Slack pushes to the app, as it appears on the wire. */
export interface Envelope {
  envelope_id: string;
  type: EnvelopeType;
  accepts_response_payload: boolean;
  /** events_api only: 0 on the first delivery. */
  retry_attempt?: number;
  /** events_api only: "" on the first delivery, "timeout" on a retry. */
  retry_reason?: string;
  payload: Record<string, unknown>;
}

export interface Ack {
  envelope_id: string;
  /** A response payload, if the client sent one (Bolt's ack() sends `{}`). */
  payload?: unknown;
  /** The connection (1-based) it came over. */
  connection: number;
}

export interface Delivery {
  envelopeId: string;
  /** Resolves with the first ack of this envelope received after this (re)delivery was queued. */
  acked: Promise<Ack>;
}

export interface FakeSocketMode {
  appToken: string;
  /** Connections greeted with hello so far, numbered 1, 2, … in order. */
  connections(): number;
  /** Resolves once connection `n` has been greeted (at once if it already was). */
  connected(n: number): Promise<void>;
  /** Resolves once connection `n` has closed, from either side. */
  closed(n: number): Promise<void>;
  /** An events_api envelope around `eventCallback(event)`. Sent now if a connection is open, else on the next one. */
  event(event: Record<string, unknown>, opts?: { eventId?: string }): Delivery;
  /** A slash_commands envelope; response_url defaults to one minted on the Web API fake. */
  command(fields: Parameters<typeof slashCommand>[0]): Delivery;
  /** An interactive envelope (block_actions, view_submission, …) around `payload`. */
  interactive(payload: Record<string, unknown>): Delivery;
  /** Sends an envelope again with retry_attempt + 1, as Slack does when it thinks the ack was missed. */
  redeliver(envelopeId: string): Delivery;
  /**
   * Sends `{ type: "disconnect", reason }` on the newest open connection and, with `drop` (default), closes it
   * from this side too. Resolves when that connection has closed.
   */
  disconnect(reason?: DisconnectReason, opts?: { drop?: boolean }): Promise<void>;
  /** Every envelope sent, in order, with the connection it went over. */
  sent(): Array<Envelope & { connection: number }>;
  acks(): Ack[];
  errors(): string[];
  /** Closes every connection and the endpoint, and detaches it from the Web API fake. */
  close(): Promise<void>;
}

interface Tracked {
  envelope: Envelope;
  /** Connection it was last sent over; null while queued. */
  sentOn: number | null;
  acked: boolean;
}

interface Connection {
  n: number;
  ws: WebSocket;
  open: boolean;
}

/** Starts the endpoint and attaches it to `slack`, so apps.connections.open with `appToken` hands out its URLs. */
export async function startFakeSocketMode(slack: FakeSlack, opts: { appToken?: string } = {}): Promise<FakeSocketMode> {
  const appToken = opts.appToken ?? "xapp-1-A0TEST-1-test";
  const tickets = new Set<string>();
  const connections: Connection[] = [];
  const tracked = new Map<string, Tracked>();
  const sent: Array<Envelope & { connection: number }> = [];
  const acks: Ack[] = [];
  const errors: string[] = [];
  let waiters: Array<{ probe: () => boolean; resolve: () => void; reject: (err: Error) => void }> = [];
  let closing = false;

  const notify = () => {
    waiters = waiters.filter((w) => {
      if (!w.probe()) return true;
      w.resolve();
      return false;
    });
  };
  const until = (probe: () => boolean, what: string): Promise<void> => {
    if (probe()) return Promise.resolve();
    if (closing) return Promise.reject(new Error(`fake Socket Mode is closed (waiting for ${what})`));
    return new Promise((resolve, reject) => waiters.push({ probe, resolve, reject: (err) => reject(new Error(`${err.message} (waiting for ${what})`)) }));
  };

  const newest = () => [...connections].reverse().find((c) => c.open);
  const write = (c: Connection, message: Record<string, unknown>) => c.ws.send(JSON.stringify(message));

  function transmit(t: Tracked, c: Connection) {
    t.sentOn = c.n;
    sent.push({ ...structuredClone(t.envelope), connection: c.n });
    write(c, t.envelope as unknown as Record<string, unknown>);
  }

  function deliver(envelope: Envelope): Delivery {
    const t: Tracked = { envelope, sentOn: null, acked: false };
    tracked.set(envelope.envelope_id, t);
    return queue(t);
  }

  function queue(t: Tracked): Delivery {
    const id = t.envelope.envelope_id;
    const before = acks.filter((a) => a.envelope_id === id).length;
    const c = newest();
    if (c) transmit(t, c);
    const acked = until(() => acks.filter((a) => a.envelope_id === id).length > before, `an ack of ${id}`).then(() => acks.filter((a) => a.envelope_id === id)[before]!);
    acked.catch(() => {}); // a test that never awaits it must not fail with an unhandled rejection at close()
    return { envelopeId: id, acked };
  }

  function retry(t: Tracked) {
    t.acked = false;
    if (t.envelope.type === "events_api") {
      t.envelope.retry_attempt = (t.envelope.retry_attempt ?? 0) + 1;
      t.envelope.retry_reason = "timeout";
    }
  }

  function onMessage(c: Connection, data: RawData, isBinary: boolean) {
    if (isBinary) return void errors.push(`connection ${c.n}: a binary message`);
    const text = Buffer.isBuffer(data) ? data.toString("utf8") : Array.isArray(data) ? Buffer.concat(data).toString("utf8") : Buffer.from(data).toString("utf8");
    let message: unknown;
    try {
      message = JSON.parse(text);
    } catch {
      return void errors.push(`connection ${c.n}: not JSON: ${text.slice(0, 200)}`);
    }
    if (!isRecord(message) || typeof message.envelope_id !== "string") return void errors.push(`connection ${c.n}: not an acknowledgement: ${text.slice(0, 200)}`);
    const t = tracked.get(message.envelope_id);
    if (!t || t.sentOn === null) return void errors.push(`connection ${c.n}: an ack of unknown envelope ${message.envelope_id}`);
    if (message.payload !== undefined && !isRecord(message.payload)) errors.push(`connection ${c.n}: ack payload is not an object: ${text.slice(0, 200)}`);
    t.acked = true;
    acks.push({ envelope_id: message.envelope_id, ...(message.payload !== undefined && { payload: message.payload }), connection: c.n });
    notify();
  }

  function onConnection(ws: WebSocket) {
    const c: Connection = { n: connections.length + 1, ws, open: true };
    connections.push(c);
    ws.on("message", (data, isBinary) => onMessage(c, data, isBinary));
    ws.on("close", () => {
      c.open = false;
      // Whatever went out on this connection without an ack is retried on the next one.
      for (const t of tracked.values()) if (!t.acked && t.sentOn === c.n) retry(t);
      notify();
    });
    write(c, {
      type: "hello",
      num_connections: connections.filter((x) => x.open).length,
      debug_info: { host: "applink-fake-1", build_number: 1, approximate_connection_time: 18060 },
      connection_info: { app_id: APP_ID },
    });
    for (const t of tracked.values()) if (!t.acked && (t.sentOn === null || !connections[t.sentOn - 1]!.open)) transmit(t, c);
    notify();
  }

  const http = createServer((_req, res) => {
    res.writeHead(404, { "content-type": "text/plain" });
    res.end("Socket Mode only: connect with a WebSocket to the URL apps.connections.open returned\n");
  });
  const wss = new WebSocketServer({ noServer: true });
  const refuse = (socket: Duplex, status: string, why: string) => {
    errors.push(why);
    socket.end(`HTTP/1.1 ${status}\r\nconnection: close\r\ncontent-length: 0\r\n\r\n`);
  };
  http.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const url = new URL(req.url ?? "/", "ws://127.0.0.1");
    const ticket = url.searchParams.get("ticket") ?? "";
    if (url.pathname !== "/link/") return refuse(socket, "404 Not Found", `a WebSocket to ${url.pathname}, not /link/`);
    if (closing) return refuse(socket, "503 Service Unavailable", "a connection after close()");
    // Slack's URLs are single-use: a client must call apps.connections.open again for every connection.
    if (!tickets.delete(ticket)) return refuse(socket, "401 Unauthorized", `a connection with an unknown or spent ticket ${JSON.stringify(ticket)}`);
    wss.handleUpgrade(req, socket, head, onConnection);
  });
  await new Promise<void>((resolve, reject) => {
    http.once("error", reject);
    http.listen(0, "127.0.0.1", () => resolve());
  });
  const base = `ws://127.0.0.1:${(http.address() as AddressInfo).port}`;

  slack.attachSocketMode({
    appToken,
    open: () => {
      const ticket = randomUUID();
      tickets.add(ticket);
      return `${base}/link/?ticket=${ticket}&app_id=${APP_ID}`;
    },
  });

  return {
    appToken,
    connections: () => connections.length,
    connected: (n) => until(() => connections.length >= n, `connection ${n}`),
    closed: (n) => until(() => connections[n - 1]?.open === false, `connection ${n} to close`),
    event: (event, o = {}) =>
      deliver({
        envelope_id: randomUUID(),
        type: "events_api",
        accepts_response_payload: false,
        retry_attempt: 0,
        retry_reason: "",
        payload: JSON.parse(eventCallback(event, { teamId: slack.teamId, ...(o.eventId !== undefined && { eventId: o.eventId }) })) as Record<string, unknown>,
      }),
    command: (fields) =>
      deliver({
        envelope_id: randomUUID(),
        type: "slash_commands",
        accepts_response_payload: true,
        payload: Object.fromEntries(new URLSearchParams(slashCommand({ response_url: slack.responseUrl(), team_id: slack.teamId, ...fields }))),
      }),
    interactive: (payload) =>
      deliver({
        envelope_id: randomUUID(),
        type: "interactive",
        // Only payloads Slack waits on for an answer (a modal's submission, a menu's options) accept one in the ack.
        accepts_response_payload: payload.type === "view_submission" || payload.type === "block_suggestion",
        payload,
      }),
    redeliver: (envelopeId) => {
      const t = tracked.get(envelopeId);
      if (!t || t.sentOn === null) throw new Error(`fake Socket Mode: envelope ${envelopeId} was never sent`);
      retry(t);
      return queue(t);
    },
    disconnect: async (reason = "refresh_requested", o = {}) => {
      const c = newest();
      if (!c) throw new Error("fake Socket Mode: no open connection to disconnect");
      write(c, { type: "disconnect", reason, debug_info: { host: "applink-fake-1" } });
      if (o.drop ?? true) c.ws.close(1000);
      await until(() => !c.open, `connection ${c.n} to close`);
    },
    sent: () => sent.map((s) => structuredClone(s)),
    acks: () => acks.map((a) => ({ ...a })),
    errors: () => [...errors],
    close: async () => {
      closing = true;
      slack.attachSocketMode(null);
      for (const w of waiters) w.reject(new Error("fake Socket Mode closed"));
      waiters = [];
      for (const c of connections) if (c.open) c.ws.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
      await new Promise<void>((resolve, reject) => {
        http.close((err) => (err ? reject(err) : resolve()));
        http.closeAllConnections();
      });
    },
  };
}
