import type { Logger } from "pino";
import type { Catalog } from "../../catalog/definition.js";
import type { SchemaChecker } from "../../catalog/schema-checker.js";
import type { FileRefBlock, ModelRequest, ModelResponse, ServerToolSpec, ToolSpec } from "../../llm/types.js";
import type { ApprovalTarget } from "../approval-prompt.js";
import type { CallLimiter } from "../call-limiter.js";
import type { Ids, RuntimeSettings, Timers } from "../deps.js";
import type { FileKeeper } from "../file-keeper.js";
import type { StackFrame } from "../frame.js";
import type { SessionFileRef } from "../file-blocks.js";
import type { Fence } from "../../store/store.js";

/** What a tool gives back; `isError` results reach the model as error tool_results it can act on. */
export interface ToolOutput {
  content: string;
  isError?: boolean;
  /** Stored files to show the model after this result (view_file). */
  files?: FileRefBlock[];
}

export interface ToolContext extends FileKeeper {
  /** The session (chat) the call runs in: whose workspace the file tools use, where scheduled jobs start their runs. */
  sessionKey: string;
  /** The lease the call's turn runs under: what the workspace's saves are fenced by. */
  fence: Fence;
  frame: StackFrame;
  toolUseId: string;
  catalog: Catalog;
  settings: RuntimeSettings;
  ids: Ids;
  signal: AbortSignal;
  log: Logger;
  limiter: CallLimiter;
  timers: Timers;
  /** Compiles output_schemas and checks results against them, off the event loop. */
  schemas: SchemaChecker;
  /** The task's owner (whose memories the memory tools use); absent outside a task. */
  owner?: string;
  /** The running task's id, when there is one (a scheduled job records the task that scheduled it). */
  taskId?: string | null;
  /** The result of the last successful run of an agent (e.g. "skill:interview") in this chat, or null. */
  previousRun(agentName: string): Promise<string | null>;
  /**
   * A stored file of this conversation, as a history names it (with `expiredAt` once the retention deleted its
   * bytes); null when it is not this conversation's or was deleted.
   */
  sessionFile(fileId: string): Promise<SessionFileRef | null>;
  /** The whole text of one of this frame's own earlier tool results (the history may show it cut), or null. */
  storedResult(toolUseId: string): Promise<string | null>;
  /**
   * A model call a tool makes for the request (WebFetch's reading of a page): counted against the session's budget,
   * traced, and added to the request's usage like the frame's own calls; cancelled with the request.
   */
  complete(request: Omit<ModelRequest, "signal">): Promise<ModelResponse>;
  /** Hands the conversation to `child`: records the activation, then throws ChildActivated. */
  activateChild(child: StackFrame): never;
  /** Runs `child` to the end without the user (batch mode) and returns its final text; `signal` can cut it short. */
  runBatch(child: StackFrame, signal?: AbortSignal): Promise<ToolOutput>;
}

export interface Tool {
  spec: ToolSpec;
  /**
   * A tool the Messages API runs itself (web search): the model is offered this declaration instead of `spec`, and
   * `run` is never called for it (its calls and results come back inside the reply).
   */
  server?: ServerToolSpec;
  /**
   * Safe to run again after a restart interrupted it. Tools with side effects say false; an interrupted
   * call then gets an error result instead of running twice.
   */
  idempotent: boolean | ((input: Record<string, unknown>, ctx: Pick<ToolContext, "catalog">) => boolean);
  /** What an interrupted call (not idempotent, cut off by a restart) answers instead of the generic note. */
  interrupted?: string;
  run(input: Record<string, unknown>, ctx: ToolContext): Promise<ToolOutput>;
  /** The owner must approve each call before it runs (a function decides per call, e.g. by HTTP method). */
  requiresApproval?: boolean | ((input: Record<string, unknown>) => boolean);
  /**
   * What a call acts on (an HTTP method and URL, a command, an MCP server and tool), shown first when the owner is
   * asked to approve it. Without it, the prompt lists the input fields only.
   */
  approvalTarget?(input: Record<string, unknown>): ApprovalTarget | null;
}

export function fail(content: string): ToolOutput {
  return { content, isError: true };
}
