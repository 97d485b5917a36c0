// Bash, as Claude Code names it: one command in a fresh sandbox, starting in the workspace. Each call is its own
// shell (variables and `cd` do not carry over). Only offered where a sandbox can run; never unconfined.
import { z } from "zod";
import type { Sandbox, SandboxResult } from "../../../sandbox/types.js";
import { fail, type Tool, type ToolOutput } from "../tool.js";
import { count, parseInput } from "./input.js";
import { overLimits, usageOf } from "./quota.js";
import { accessFor, WORKSPACE_PATH, type WorkspaceResolver } from "./workspace.js";

export const BASH = "Bash";

export interface BashOptions {
  workspaceFor: WorkspaceResolver;
  sandbox: Sandbox;
  /** BASH_DEFAULT_TIMEOUT_MS: the limit when the model gives none. */
  defaultTimeoutMs: number;
  /** Output kept per command (stdout and stderr together), bytes. Default 30 000. */
  outputBytes?: number;
}

const input = z.object({
  command: z.string({ message: "must be the command to run, a string" }).refine((c) => c.trim() !== "", { message: "must not be empty" }),
  timeout: count(1).optional(),
  description: z.string().optional(),
  run_in_background: z.unknown().optional(),
});

const seconds = (ms: number) => `${Math.round(ms / 100) / 10} s`;

function summarize(result: Exclude<SandboxResult, { status: "busy" | "failed" }>): { text: string; isError: boolean } {
  const { stdout, stderr, truncated, totalBytes } = result.output;
  const parts = [stdout.replace(/\n$/, ""), stderr.replace(/\n$/, "")].filter((p) => p !== "");
  const notes: string[] = [];
  let isError = false;
  switch (result.status) {
    case "exited":
      if (result.limit === "cpu") notes.push("The command was stopped: it used up its CPU time.");
      if (result.exitCode !== 0) {
        isError = true;
        parts.unshift(`Exit code ${result.exitCode}`);
      }
      break;
    case "timed_out":
      isError = true;
      notes.push(`The command timed out after ${seconds(result.timeoutMs)} and was stopped, with every process it started.`);
      break;
    case "cancelled":
      isError = true;
      notes.push("The command was cancelled and stopped, with every process it started.");
      break;
    default: {
      const never: never = result;
      throw new Error(`unhandled result ${JSON.stringify(never)}`);
    }
  }
  if (truncated) notes.push(`[output cut: it was ${totalBytes} bytes; the start and the end are shown. Redirect long output to a file and read parts of it.]`);
  for (const refusal of result.refusals) notes.push(`[network: refused ${refusal}]`);
  if (result.waitedMs >= 1000) notes.push(`[waited ${seconds(result.waitedMs)} for a free sandbox before starting]`);
  const text = [...parts, ...notes].join("\n");
  return { text: text === "" ? "(no output)" : text, isError };
}

export function createBashTool(options: BashOptions): Tool {
  const { sandbox } = options;
  const hosts = "hosts" in sandbox.network ? sandbox.network.hosts : [];
  const network = hosts.length ? `Only these hosts can be reached, through an HTTP proxy set in HTTP(S)_PROXY: ${hosts.join(", ")}.` : "There is no network.";
  return {
    spec: {
      name: BASH,
      description:
        `Runs a bash command in a sandbox and returns its output. It starts in ${WORKSPACE_PATH} (the workspace, writable); a ` +
        `skill's own folder is readable at the path its instructions give; the rest of the system is read-only (python3 and the ` +
        `usual tools are there). ${network} Each call is a new shell: cd and variables do not carry over. Default timeout ` +
        `${seconds(options.defaultTimeoutMs)}, at most ${seconds(sandbox.maxTimeoutMs)}; the command and everything it started ` +
        `are killed when it passes. Long output is cut; redirect it to a file and Read or Grep the file.`,
      input_schema: {
        type: "object",
        properties: {
          command: { type: "string", description: "The command to execute." },
          timeout: { type: "number", description: `Optional timeout in milliseconds (max ${sandbox.maxTimeoutMs}).` },
          description: { type: "string", description: 'What the command does, in 5-10 words (e.g. "Count rows in data.csv").' },
        },
        required: ["command"],
      },
    },
    // A command may write files; run twice after a restart, it could do so twice.
    idempotent: false,
    interrupted:
      `${BASH}: this command was started before a restart and may have run, wholly or in part; it was not run again. ` +
      `The workspace holds what was saved before it unless it finished: check the workspace before running it again.`,
    // Commands that can reach the network ask the owner first (SANDBOX_ALLOW_HOSTS set); without it they run freely.
    requiresApproval: hosts.length > 0,
    async run(raw, ctx): Promise<ToolOutput> {
      const parsed = parseInput(BASH, input, raw);
      if (!parsed.ok) return parsed.output;
      const { command, timeout } = parsed.value;
      if (parsed.value.run_in_background === true || parsed.value.run_in_background === "true") {
        return fail(`${BASH}: run_in_background is not available here; run the command in the foreground (timeout up to ${sandbox.maxTimeoutMs} ms)`);
      }
      if (timeout !== undefined && timeout > sandbox.maxTimeoutMs) {
        return fail(`${BASH}: timeout ${timeout} ms is over the maximum of ${sandbox.maxTimeoutMs} ms (BASH_MAX_TIMEOUT_MS)`);
      }
      const access = await accessFor(BASH, ctx, options.workspaceFor);
      if (!access.ok) return access.output;
      const { workspace, readOnly } = access.access;
      const result = await sandbox.run({
        key: workspace.id,
        argv: ["bash", "-c", command],
        workspace: workspace.dir,
        readOnly,
        timeoutMs: timeout ?? options.defaultTimeoutMs,
        network: true,
        outputBytes: options.outputBytes ?? 30_000,
        signal: ctx.signal,
      });
      if (result.status === "busy") return fail(`${BASH}: ${result.reason}`);
      if (result.status === "failed") return fail(`${BASH}: the sandbox could not run the command: ${result.reason}`);
      await workspace.changed?.({ all: true });
      const { text, isError } = summarize(result);
      const over = overLimits(await usageOf(workspace), workspace.limits);
      const warning = over ? `\n[the workspace now holds ${over}: delete files; until then Write and Edit refuse to add more]` : "";
      return { content: `${text}${warning}`, ...(isError ? { isError: true } : {}) };
    },
  };
}
