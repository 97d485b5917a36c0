// A provider registers its sink when it starts: what a previous process left undone for its sessions is taken up
// then, in the background (the replies committed but not yet shown, the indicators shown and never taken back).
import type { Logger } from "pino";
import type { Store } from "../store/store.js";
import type { ProviderSink } from "./types.js";

export interface ProviderRegistrationDeps {
  store: Pick<Store, "indicators">;
  log: Logger;
  /** The sinks by session-key prefix, shared with the outbox and the turns. */
  sinks: Map<string, ProviderSink>;
  /** Delivers the pending replies of every session under a prefix (the outbox). */
  deliverAll: (prefix: string) => Promise<unknown>;
}

export class ProviderRegistration {
  /** What registering a provider started (its pending replies, its stale indicators): idle() waits for it. */
  private readonly registering = new Set<Promise<unknown>>();

  constructor(private readonly deps: ProviderRegistrationDeps) {}

  register(sink: ProviderSink): void {
    this.deps.sinks.set(sink.prefix, sink);
    // Replies committed before a restart but not yet shown go out now.
    this.track(this.deps.deliverAll(sink.prefix).catch((error: unknown) => this.deps.log.error({ err: error }, "could not read the pending replies")));
    // Indicators a previous process showed and never took back ("typing", 👀) come off now.
    if (sink.clearIndicator) {
      const clear = sink.clearIndicator.bind(sink);
      this.track(
        this.deps.store.indicators
          .list(sink.prefix)
          .then((shown) =>
            Promise.all(
              shown.map(({ sessionKey, data }) =>
                clear(sessionKey, data)
                  .then(() => this.deps.store.indicators.delete(sessionKey))
                  .catch((error: unknown) => this.deps.log.warn({ session: sessionKey, err: error }, "could not clear a stale indicator")),
              ),
            ),
          )
          .catch((error: unknown) => this.deps.log.warn({ err: error }, "could not read the stale indicators")),
      );
    }
  }

  /** Resolves once everything registering started has ended. */
  async idle(): Promise<void> {
    await Promise.allSettled([...this.registering]);
  }

  private track(work: Promise<unknown>): void {
    this.registering.add(work);
    void work.finally(() => this.registering.delete(work));
  }
}
