// A platform's address as the network presents it, between the gateway and a fake platform: closed (nothing
// listens: connect ECONNREFUSED), a black hole (the connection is accepted and never answered, as a dropping
// firewall or a dead route does), or open (bytes pass through to the fake).
import { connect, createServer, type Server, type Socket } from "node:net";

export type DoorMode = "closed" | "blackhole" | "open";

export interface Door {
  /** http://127.0.0.1:<port>, with `path` appended (the fake's own path, e.g. Slack's /api/). */
  url(path?: string): string;
  readonly port: number;
  /** Changes what happens to new connections; every connection open now is dropped. */
  set(mode: DoorMode): Promise<void>;
  /** Resolves once `n` connections have been accepted in all (a black hole counts those it swallowed). */
  accepted(n?: number): Promise<void>;
  close(): Promise<void>;
}

/** A door on a port of its own in front of the fake at `target` (its http://127.0.0.1:<port> URL). */
export async function openDoor(target: string, mode: DoorMode): Promise<Door> {
  const targetPort = Number(new URL(target).port);
  const sockets = new Set<Socket>();
  let current: DoorMode = mode;
  let server: Server | null = null;
  let accepted = 0;
  const waiting: Array<{ n: number; resolve: () => void }> = [];
  const listen = (port: number) =>
    new Promise<number>((resolve, reject) => {
      const s = createServer((socket) => {
        accepted++;
        for (const w of waiting.filter((w) => accepted >= w.n)) {
          waiting.splice(waiting.indexOf(w), 1);
          w.resolve();
        }
        sockets.add(socket);
        socket.on("close", () => sockets.delete(socket));
        socket.on("error", () => {});
        if (current === "blackhole") return;
        const upstream = connect(targetPort, "127.0.0.1");
        sockets.add(upstream);
        upstream.on("close", () => sockets.delete(upstream));
        upstream.on("error", () => socket.destroy());
        socket.pipe(upstream).pipe(socket);
      });
      s.once("error", reject);
      s.listen(port, "127.0.0.1", () => resolve((s.address() as { port: number }).port));
      server = s;
    });
  const stop = () =>
    new Promise<void>((resolve) => {
      for (const socket of sockets) socket.destroy();
      const s = server;
      server = null;
      if (!s) return resolve();
      s.close(() => resolve());
    });
  // The port is taken once, and kept while closed by listening again on it when the door opens.
  const port = await listen(0);
  if (mode === "closed") await stop();
  return {
    port,
    url: (path = "") => `http://127.0.0.1:${port}${path}`,
    accepted: (n = 1) => (accepted >= n ? Promise.resolve() : new Promise<void>((resolve) => waiting.push({ n, resolve }))),
    async set(next) {
      await stop();
      current = next;
      if (next !== "closed") await listen(port);
    },
    close: stop,
  };
}
