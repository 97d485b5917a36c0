// The outbox role: the delivery journal. A turn's replies are written by its step (StepStore); notices that belong
// to no turn are queued here; providers' deliveries claim, mark and record chunks of what is pending.

export interface OutboundInput {
  /** When set, the message asks the owner to approve or deny this approval (providers add buttons). */
  approvalId?: string | null;
  id: string;
  requestId: string | null;
  taskId: string | null;
  agent: string;
  depth: number;
  text: string;
  kind: "message" | "notice" | "error";
  /**
   * A file an agent sent (send_file): the id of a stored file of the conversation, delivered with the sink's
   * `deliverFile`; `text` is then its caption ("" without one). Absent for a text reply.
   */
  fileId?: string | null;
}

export interface OutboundRecord extends OutboundInput {
  sessionKey: string;
  createdAt: number;
}

/** A reply claimed for sending (OutboxStore.claimNext), with what a delivery pass needs to know beside it. */
export interface ClaimedOutbound extends OutboundRecord {
  /** Its chunks already sent to the platform (a send cut off before: they are not sent again). */
  sentChunks: number[];
  /**
   * False when no other reply of the session was pending as this one was claimed: the pass may end after it,
   * because whatever is committed later is announced after its commit and starts a pass of its own. True when one
   * was, or may have been (SQLite always says so: there the claim that finds nothing is a read in the process).
   */
  morePending: boolean;
}

/** A reply the platform refused for good (blocked, kicked, chat gone): kept, never sent again. */
export interface UndeliverableRecord extends OutboundRecord {
  failure: string;
  failedAt: number;
}

export interface OutboxStore {
  /**
   * Queues messages that belong to no turn (a notice from the gateway itself: a refusal, an approval that timed
   * out), committed and announced like a step's replies. Needs no lease: it changes no conversation's state.
   */
  enqueue(sessionKey: string, messages: OutboundInput[]): Promise<void>;
  /** Replies not yet delivered (nor given up), oldest first; of one session, or of all. */
  pending(sessionKey?: string): Promise<OutboundRecord[]>;
  /** Every outbound message a request produced, in order. */
  ofRequest(requestId: string): Promise<OutboundRecord[]>;
  /**
   * Claims the session's oldest undelivered reply for sending (marks it delivered, so it is never sent twice, even
   * by two replicas at once: PostgreSQL claims with FOR UPDATE SKIP LOCKED), with its sent chunks, in one round
   * trip. Null when nothing is left to send.
   */
  claimNext(sessionKey: string): Promise<ClaimedOutbound | null>;
  markDelivered(outboundId: string): Promise<void>;
  /** Takes back a delivery mark when the send failed, so it is tried again. */
  markUndelivered(outboundId: string): Promise<void>;
  /** Marks a reply undeliverable for good; false when it already was (so it is logged once). */
  markUndeliverable(outboundId: string, reason: string): Promise<boolean>;
  undeliverable(sessionKey: string): Promise<UndeliverableRecord[]>;
  /** Chunks of an outbound message already sent to the platform. */
  deliveredChunks(outboundId: string): Promise<number[]>;
  recordChunk(outboundId: string, chunk: number, platformMessageId: string): Promise<void>;
}
