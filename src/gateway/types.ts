/** A message from any chat platform, already mapped to a session key by its provider. */
export interface InboundMessage {
  sessionKey: string;
  /** The platform's id for this message: a second delivery of the same id is processed once. */
  messageId: string;
  userId: string;
  text: string;
}

/** A reply for the chat, labelled with the agent that said it (depth 1 = main, 0 = the gateway itself). */
export interface OutboundMessage {
  id: string;
  sessionKey: string;
  requestId: string | null;
  agent: string;
  depth: number;
  text: string;
  kind: "message" | "notice" | "error";
}

/** A provider's way back to its platform; chosen by the session key's prefix (`console:…`). */
export interface ProviderSink {
  prefix: string;
  deliver(message: OutboundMessage): Promise<void>;
}
