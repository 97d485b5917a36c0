import type { TurnObserver } from "../runtime/observer.js";
import { NO_OBSERVER } from "../runtime/observer.js";
import type { OutboundRecord, RequestRecord } from "../store/store.js";

export type DeliveryOutcome = "sent" | "undeliverable" | "retry";

/** What the gateway tells whoever watches it (src/telemetry), beside what the runtime tells. */
export interface GatewayObserver extends TurnObserver {
  /** A message from a platform was stored (a duplicate is not counted). */
  inbound(provider: string): void;
  /** Runs one request here (its turn or command, then the delivery of what it produced). */
  request<T>(request: RequestRecord, run: () => Promise<T>): Promise<T>;
  /** A reply was handed to its platform, refused for good, or will be retried. */
  delivered(out: OutboundRecord, outcome: DeliveryOutcome): void;
  /** A message was refused at the door: its sender went over USER_MESSAGES_PER_MINUTE. */
  flooded?(provider: string): void;
}

export const NO_GATEWAY_OBSERVER: GatewayObserver = {
  ...NO_OBSERVER,
  inbound: () => {},
  request: (_request, run) => run(),
  delivered: () => {},
};
