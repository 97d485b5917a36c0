// The gateway's own answers: a reply that ends a request (done, or failed with a code), and what happens when the
// work behind a request throws (a lost lease says nothing; a corrupt state or anything else is told and coded).
import type { Logger } from "pino";
import type { Ids } from "../runtime/deps.js";
import type { AgentStackManager } from "../runtime/stack-manager.js";
import { CorruptStateError, FencedError, type RequestRecord, type SessionWriter } from "../store/store.js";
import { FAILURE_TEXT, STORE_FAILING, type FailureCode } from "./failures.js";
import type { RequestBook } from "./request-book.js";
import { providerOf } from "./session-key.js";
import type { ProviderSink } from "./types.js";

export interface RepliesDeps {
  ids: Ids;
  log: Logger;
  stacks: AgentStackManager;
  sinks: ReadonlyMap<string, ProviderSink>;
  book: RequestBook;
}

export class Replies {
  constructor(private readonly deps: RepliesDeps) {}

  /** Runs `work` for `request`; if it throws, the request fails with the right reply (see failed). */
  async guard(request: RequestRecord, writer: SessionWriter, work: () => Promise<unknown>): Promise<void> {
    try {
      await work();
    } catch (error) {
      await this.failed(request, writer, error);
    }
  }

  async failed(request: RequestRecord, writer: SessionWriter, error: unknown): Promise<void> {
    this.deps.stacks.invalidate(request.sessionKey);
    if (error instanceof FencedError) {
      // Another replica took the session over while this one was paused: it carries on from the last step
      // committed; nothing of this turn was written, and nothing is said from here.
      this.deps.book.handOver(request.id);
      this.deps.log.warn({ session: request.sessionKey, request: request.id }, "this replica lost the session's lease; its turn stopped without committing");
      return;
    }
    const corrupt = error instanceof CorruptStateError;
    this.deps.log.error({ session: request.sessionKey, request: request.id, err: error }, corrupt ? "stored state for this session is corrupt" : "request failed");
    const code = corrupt ? "corrupt" : "internal";
    await this.reply(request, writer, FAILURE_TEXT[code], code);
  }

  /** Ends a request with a message from the gateway itself, in one commit: done, or failed for `failure`. */
  async reply(request: RequestRecord, writer: SessionWriter, text: string, failure?: FailureCode): Promise<void> {
    try {
      await this.commitReply(request, writer, text, failure);
      if (failure) this.deps.book.failed(request.id, failure);
    } catch (error) {
      if (error instanceof FencedError) return this.failed(request, writer, error);
      // The store cannot take the reply (disk full, I/O error): tell the user directly that it was not
      // processed, and from then on the request is failed, here and (once the store can write) on disk: a
      // message the user was told had failed must not run later, after newer ones.
      this.deps.log.error({ err: error, request: request.id }, "could not record a reply; sending it directly");
      this.deps.book.unrecordedFailure(request.id, writer, STORE_FAILING);
      const sink = this.deps.sinks.get(providerOf(request.sessionKey));
      void sink
        ?.deliver(
          { id: this.deps.ids.next("out"), sessionKey: request.sessionKey, requestId: request.id, agent: "switchboard", depth: 0, text: STORE_FAILING, kind: "error" },
          { sentChunks: new Set(), chunkSent: async () => {} },
        )
        .catch(() => {});
    }
  }

  private commitReply(request: RequestRecord, writer: SessionWriter, text: string, failure: FailureCode | undefined): Promise<void> {
    return writer.commit({
      request: failure ? { id: request.id, status: "failed", error: text, errorCode: failure } : { id: request.id, status: "done" },
      outbound: [
        {
          id: this.deps.ids.next("out"),
          requestId: request.id,
          taskId: null,
          agent: "switchboard",
          depth: 0,
          text,
          kind: failure ? "error" : "notice",
        },
      ],
    });
  }
}
