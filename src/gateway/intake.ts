// Admission of incoming messages, in this order: a message already stored (its platform id or Idempotency-Key seen
// before) is a duplicate; then the owner rules and the flood limit; only then are its files fetched, the session's
// file cap applied and voice notes heard. What passes is stored once (the store's unique key decides again, for
// two deliveries that raced past the first look) and its session woken.
import type { Logger } from "pino";
import type { Ids } from "../runtime/deps.js";
import type { DoorLook, Store } from "../store/store.js";
import type { FloodGate } from "./flood-gate.js";
import { toStore, withinSessionCap } from "./inbound-files.js";
import type { GatewayObserver } from "./observer.js";
import { admission, refusal } from "./ownership.js";
import type { RequestBook } from "./request-book.js";
import type { SessionWorkers } from "./session-workers.js";
import { providerOf } from "./session-key.js";
import type { InboundMessage, SubmitResult } from "./types.js";
import type { VoiceDoor } from "./voice.js";

export interface IntakeDeps {
  store: Store;
  ids: Ids;
  log: Logger;
  book: RequestBook;
  workers: Pick<SessionWorkers, "wake" | "interrupt">;
  observer: GatewayObserver;
  /** USER_MESSAGES_PER_MINUTE; null: no limit. */
  flood: FloodGate | null;
  voice: VoiceDoor;
  /** MAX_SESSION_FILE_BYTES; 0: no cap. */
  maxSessionFileBytes: number;
  /** A notice from the gateway itself, for no request (Gateway.notify). */
  notify(sessionKey: string, text: string): Promise<void>;
  shutdown: AbortSignal;
}

export class Intake {
  constructor(private readonly deps: IntakeDeps) {}

  async submit(message: InboundMessage): Promise<SubmitResult> {
    if (this.deps.shutdown.aborted) throw new Error("the gateway is shutting down");
    const { store, ids, log, book, workers } = this.deps;
    // A platform's re-delivery or a client's retry: no flood token, no download, no transcription.
    const { seen, owner } = await this.look(message);
    if (seen) {
      log.info({ session: message.sessionKey, request: seen.id, messageId: message.messageId }, "duplicate message ignored");
      return { status: "duplicate", requestId: seen.id };
    }
    // Someone else's conversation: only its owner may talk to the agents or stop them (ownership.ts).
    const admitted = admission(message, owner);
    if (!admitted.admitted) return admitted.result;
    const { command, rule } = admitted;
    // A /cancel stops spending and starts nothing: it is never held back.
    const limited = command === "cancel" ? null : this.deps.flood?.limit(message);
    if (limited) return limited;

    const given = message.fetchFiles ? await message.fetchFiles() : message.files;
    const files = given ? await withinSessionCap(given, store, message.sessionKey, this.deps.maxSessionFileBytes) : [];
    const refused = files.filter((f) => !f.ok && !given!.includes(f));
    if (refused.length > 0) await this.deps.notify(message.sessionKey, refused.map((f) => (f.ok ? "" : f.reason)).join("\n"));
    const heard = await this.deps.voice.hear({ ...message, files });
    if (heard.notice) await this.deps.notify(message.sessionKey, heard.notice);

    const id = ids.next("req");
    const newRequest = {
      id,
      sessionKey: message.sessionKey,
      externalId: message.messageId,
      kind: command ? ("command" as const) : ("message" as const),
      userId: message.userId,
      text: heard.text,
      ...(message.privateSession ? { claimSession: { mainAgentSessionId: ids.next("as") } } : {}),
      ...(message.idempotency ? { idempotency: message.idempotency } : {}),
      ...(message.taskOptions ? { taskOptions: message.taskOptions } : {}),
      ...(rule ? { owner: rule } : {}),
      ...(files.some((f) => f.ok) ? { files: toStore(files, ids) } : {}),
    };
    // This process wakes the session itself below; the change the insert announces needs no second wake-up.
    const inserted = await book.storingOf(id, () => store.requests.insert(newRequest));
    if (inserted.status === "forbidden") return { status: "forbidden" };
    // Another member's message was stored first: the conversation became theirs.
    if (inserted.status === "busy") return refusal(message.addressed ?? true, command);
    const { request } = inserted;
    if (inserted.status === "duplicate") {
      log.info({ session: message.sessionKey, request: request.id, messageId: message.messageId }, "duplicate message ignored (it raced its twin)");
      return { status: "duplicate", requestId: request.id };
    }
    // A /cancel or /reset stops the turn at once when it runs here; elsewhere, the replica running it hears of it.
    if (command === "cancel" || command === "reset") workers.interrupt(message.sessionKey, message.userId);
    workers.wake(message.sessionKey);
    this.deps.observer.inbound(providerOf(message.sessionKey));
    return { status: "accepted", requestId: request.id };
  }

  /**
   * The request already stored for this message (same Idempotency-Key, or same platform id in the session), if any,
   * and the conversation's owner: one look at the store for a message without a key.
   */
  private async look(message: InboundMessage): Promise<DoorLook> {
    const { requests } = this.deps.store;
    const keyed = message.idempotency ? await requests.idempotency(message.userId, message.idempotency.key) : null;
    const seen = keyed ? await requests.get(keyed.requestId) : null;
    // A duplicate is turned away before its owner matters.
    return seen ? { seen, owner: null } : requests.atDoor(message.sessionKey, message.messageId);
  }
}
