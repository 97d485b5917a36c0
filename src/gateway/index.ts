// The gateway as providers see it: the one module a provider imports from src/gateway. The facade's methods are
// everything a provider does with the gateway (submit, decide, notify, register its sink, wait for a request, read
// its conversations through `reads`); the rest are the provider-neutral types and pure helpers they share.
// test/providers/imports.test.ts keeps providers to this module and the shared helpers it lists.
import type { Gateway } from "./gateway.js";

export type GatewayFacade = Pick<
  Gateway,
  | "submit"
  | "decide"
  | "notify"
  | "whenDone"
  | "register"
  | "rememberIndicator"
  | "forgetIndicator"
  | "moveSession"
  | "catalog"
  | "now"
  | "replica"
  | "activeTask"
  | "sessionOfActiveTask"
  | "idle"
  | "reads"
>;

export type { GatewayReads } from "./reads.js";
export type { ApiReads } from "./api-reads.js";
export type { AdminReads, Snapshot } from "./admin-reads.js";
export type {
  ApprovalRecord,
  MemoryRecord,
  OutboundRecord,
  RequestKind,
  RequestRecord,
  StoreChange,
  TaskOptions,
  TaskRecord,
  UserFootprint,
} from "../store/store.js";
export { available, type Catalog, type Definition } from "../catalog/definition.js";
export type { ServerView } from "../mcp/connection.js";
export { parseRunExternalId } from "../schedules/run-id.js";
export type { Leadership, LeadershipOptions } from "./leadership.js";
export type {
  Decision,
  DecisionResult,
  DeliveryDisposition,
  DeliveryReceipt,
  InboundMessage,
  OutboundMessage,
  ProviderSink,
  SubmitResult,
} from "./types.js";
export { DeliveryError } from "./types.js";
export { isInternal, type FailureCode, type RequestOutcome } from "./failures.js";
export { sessionKey } from "./session-key.js";
export { userId } from "./identity.js";
export { cutPosition } from "./chunking.js";
export { formattable } from "./markdown-limits.js";
export { COMMAND_MENU, decisionText } from "./commands.js";
export type { StartProblem } from "./connection.js";
