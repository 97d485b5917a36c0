import type { Logger } from "pino";
import { FloodControl } from "./flood.js";
import type { GatewayObserver } from "./observer.js";
import { providerOf } from "./session-key.js";
import type { InboundMessage, SubmitResult } from "./types.js";

/** The gateway's door for USER_MESSAGES_PER_MINUTE: each refusal counted and logged with its reason. */
export class FloodGate {
  private readonly control: FloodControl;

  constructor(
    perMinute: number,
    now: () => number,
    private readonly log: Logger,
    private readonly observer: GatewayObserver,
  ) {
    this.control = new FloodControl(perMinute, now);
  }

  /** Null when `message` may go in; else the refusal (nothing is stored). */
  limit(message: InboundMessage): Extract<SubmitResult, { status: "limited" }> | null {
    const flooded = this.control.take(message.userId);
    if (!flooded) return null;
    const provider = providerOf(message.sessionKey);
    this.observer.flooded?.(provider);
    this.log.info(
      { session: message.sessionKey, user: message.userId, messageId: message.messageId, retryAfterMs: flooded.retryAfterMs, told: !flooded.quiet },
      `message refused: its sender is over USER_MESSAGES_PER_MINUTE (${this.control.perMinute})`,
    );
    return { status: "limited", text: flooded.notice, quiet: flooded.quiet, retryAfterMs: flooded.retryAfterMs, perMinute: this.control.perMinute };
  }
}
