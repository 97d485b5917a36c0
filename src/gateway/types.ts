import type { InboundFile, OutboundFile } from "../files/types.js";
import type { TaskOptions } from "../store/store.js";

/** A message from any chat platform, already mapped to a session key by its provider. */
export interface InboundMessage {
  sessionKey: string;
  /** The platform's id for this message: a second delivery of the same id is processed once. */
  messageId: string;
  userId: string;
  text: string;
  /**
   * Aimed at the bot: a direct chat, a mention, a reply to the bot, or a command. In a group,
   * chatter that is not addressed reaches the agents only from the owner of the running task.
   * Default true.
   */
  addressed?: boolean;
  /**
   * The session belongs to one user (HTTP API sessions): the first request claims it, atomically with
   * storing that request; anyone else is refused before anything is stored.
   */
  privateSession?: boolean;
  /** A client's Idempotency-Key (per user) and a fingerprint of what was asked, so a retry finds the first request. */
  idempotency?: { key: string; fingerprint: string };
  /** The task this message starts takes an expiry and metadata (HTTP API); refused when a task is under way. */
  taskOptions?: TaskOptions;
  /**
   * The message's files, already downloaded and judged (src/files/intake.ts): each one read (bytes, type from the
   * bytes, sanitised name, size) or a failure the user is told about. `text` may be empty when files came alone.
   */
  files?: InboundFile[];
  /**
   * Fetches the message's files (downloads them, says what could not be read) and returns them like `files`. The
   * gateway calls it only once the message passed the duplicate and flood checks, so a re-delivered message or a
   * flooding sender downloads nothing; a message that has files to fetch gives this instead of `files`.
   */
  fetchFiles?: () => Promise<InboundFile[]>;
}

export type SubmitResult =
  | { status: "accepted"; requestId: string }
  | { status: "duplicate"; requestId: string }
  /** Not for the bot (group chatter): nothing is stored or answered. */
  | { status: "ignored" }
  /** Someone else's task is running here; `text` is the polite refusal for the provider to show. */
  | { status: "refused"; text: string }
  /** A private session that another user owns; nothing was stored. */
  | { status: "forbidden" }
  /**
   * The sender went over USER_MESSAGES_PER_MINUTE: nothing was stored. `text` says so; a chat shows it unless
   * `quiet` (they were told already), an API answers 429 with it and `retryAfterMs` every time.
   */
  | { status: "limited"; text: string; quiet: boolean; retryAfterMs: number; perMinute: number };

/** A reply for the chat, labelled with the agent that said it (depth 1 = main, 0 = the gateway itself). */
export interface OutboundMessage {
  id: string;
  sessionKey: string;
  requestId: string | null;
  agent: string;
  depth: number;
  text: string;
  kind: "message" | "notice" | "error";
  /** Set when the message asks the owner to approve a tool call: providers show Approve/Deny. */
  approvalId?: string | null;
}

export type Decision = "approve" | "deny";
export type DecisionResult =
  /** `requestId` is the request that resumes the waiting turn. */
  | { status: "approved" | "denied"; requestId: string }
  | { status: "already_decided"; decided: string }
  /** The approval's task expired before the decision: the call does not run; `requestId` (if any) ends the task. */
  | { status: "task_expired"; taskId: string; expiresAt: number; requestId: string | null }
  | { status: "not_owner" }
  | { status: "not_found" };

/** What a provider has already sent of one outbound message, so a restart never sends a chunk twice. */
export interface DeliveryReceipt {
  readonly sentChunks: ReadonlySet<number>;
  chunkSent(index: number, platformMessageId: string): Promise<void>;
}

/** A provider's way back to its platform; chosen by the session key's prefix (`console:…`). */
export interface ProviderSink {
  prefix: string;
  deliver(message: OutboundMessage, receipt: DeliveryReceipt): Promise<void>;
  /** Shows that a turn is running (a typing indicator); returns the function that stops it. */
  working?(sessionKey: string): () => void;
  /**
   * Removes an indicator a previous process showed and could not take back (a 👀 reaction, an assistant
   * status): called at registration for each one the provider recorded with `Gateway.rememberIndicator`.
   */
  clearIndicator?(sessionKey: string, data: string): Promise<void>;
  /** Stack changes of a session (agent pushed or popped), for providers that show them. */
  event?(sessionKey: string, event: { type: "push" | "pop"; agent: string; depth: number }): void;
  /**
   * A piece of a reply as the model writes it (`text` is the new piece only), for providers that show replies being
   * written. A preview: the whole reply still arrives through `deliver`, once.
   */
  stream?(sessionKey: string, delta: { agent: string; depth: number; text: string }): void;
  /**
   * What `stream` showed of that agent's reply is void (its model call failed midway and starts over): the preview
   * is emptied or taken down, and the next pieces start the reply again, so nobody reads the same words twice.
   */
  resetStream?(sessionKey: string, who: { agent: string; depth: number }): void;
  /**
   * Sends a file an agent produced (send_file) the platform's way: an upload with the caption. Like `deliver`, it
   * throws DeliveryError for failures that retrying cannot fix. A sink without it gets the file as a download link
   * or a notice, whichever the gateway can offer.
   */
  deliverFile?(file: OutboundFile): Promise<void>;
}

/** What a platform said when a delivery failed, as the provider understood it. */
export type DeliveryDisposition =
  /** Will never work (blocked by the user, kicked, chat or thread gone, topic closed, not in channel, archived). */
  | { kind: "permanent"; reason: string }
  /** The platform asked to wait this long (e.g. Telegram's `retry_after` past the retry plugin's cap). */
  | { kind: "retry_after"; ms: number }
  /** The chat moved (Telegram group → supergroup): the conversation moves to `to` and is re-sent there. */
  | { kind: "moved"; to: string };

/**
 * Thrown by a sink's `deliver` for failures the gateway must treat differently from a transient error (which it
 * retries with backoff): permanent ones are marked undeliverable once, waits are honoured, moves move the session.
 */
export class DeliveryError extends Error {
  override name = "DeliveryError";
  constructor(
    message: string,
    readonly disposition: DeliveryDisposition,
  ) {
    super(message);
  }
}
