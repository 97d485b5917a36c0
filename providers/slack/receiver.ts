import type { IncomingMessage, RequestListener, ServerResponse } from "node:http";
import { HTTPReceiver, type Logger as BoltLogger } from "@slack/bolt";
import type { Logger } from "pino";

/** Slack's replay window: a signed request more than 5 minutes from our clock, either way, is refused. */
export const MAX_CLOCK_SKEW_SECONDS = 5 * 60;

export interface ReceiverOptions {
  signingSecret: string;
  port: number;
  logger: BoltLogger;
  log: Logger;
  /** Milliseconds since the epoch; injectable so tests can move the clock. Default Date.now. */
  now?: (() => number) | undefined;
}

/**
 * Bolt's HTTP receiver behind a timestamp check. Bolt (4.x and 5.1 alike, `verifySlackRequest`) refuses
 * only timestamps more than 5 minutes in the past; a signature made with a clock set ahead would be
 * accepted, and replayable until our clock caught up. This answers 401 before Bolt reads the request.
 */
export function guardedReceiver(options: ReceiverOptions): HTTPReceiver {
  const receiver = new HTTPReceiver({ signingSecret: options.signingSecret, port: options.port, logger: options.logger });
  receiver.requestListener = refuseSkewedTimestamps(receiver.requestListener, options.now ?? Date.now, options.log);
  return receiver;
}

/**
 * Requests without the header (or with a malformed one) go on to Bolt, which refuses them itself; the
 * check here only adds the future side of the window and uses the injectable clock for both sides.
 */
export function refuseSkewedTimestamps(next: RequestListener, now: () => number, log: Logger): RequestListener {
  return (req: IncomingMessage, res: ServerResponse) => {
    const header = req.headers["x-slack-request-timestamp"];
    const sent = typeof header === "string" && /^\d+$/.test(header.trim()) ? Number(header) : null;
    if (sent !== null) {
      const skew = sent - Math.floor(now() / 1000);
      if (Math.abs(skew) > MAX_CLOCK_SKEW_SECONDS) {
        log.warn({ skewSeconds: skew }, "refused a Slack request whose signed timestamp is more than 5 minutes from our clock");
        req.resume(); // drain the body so the connection can close cleanly
        res.writeHead(401);
        res.end();
        return;
      }
    }
    return next(req, res);
  };
}
