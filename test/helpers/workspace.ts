// The workspace tools in a running harness: a session workspace under the harness's DATA_DIR (as the
// persistence layer will place it), the changes the tools report, and one model turn that calls tools and
// returns what the model got back.
import { chmodSync, chownSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { expect } from "vitest";
import type { SandboxUser } from "../../src/sandbox/types.js";
import { skillFolderMount, type WorkspaceChange, type WorkspaceResolver } from "../../src/runtime/tools/workspace/index.js";
import { reply, text, toolUse } from "../fakes/anthropic/server.js";
import type { Harness } from "./harness.js";
import { resultTexts } from "./requests.js";

export interface TestWorkspace {
  dir: string;
  changes: WorkspaceChange[];
  workspaceFor: WorkspaceResolver;
}

/** A workspace folder at <root>/data/workspaces/<id>, owned by `owner` (the sandbox's user) when given. */
export function testWorkspace(
  root: string,
  id = "alice",
  options: { owner?: SandboxUser | null; maxBytes?: number; maxFiles?: number; usage?: () => Promise<{ bytes: number; files: number }> } = {},
): TestWorkspace {
  const dir = join(root, "data", "workspaces", id);
  mkdirSync(dir, { recursive: true });
  // The sandbox's user passes through the folders above the workspace (see src/sandbox/reach.ts).
  for (const up of [root, join(root, "data"), join(root, "data", "workspaces")]) chmodSync(up, 0o711);
  if (options.owner) chownSync(dir, options.owner.uid, options.owner.gid);
  const changes: WorkspaceChange[] = [];
  const workspace = {
    id,
    dir,
    limits: { maxBytes: options.maxBytes ?? 10 * 1024 * 1024, maxFiles: options.maxFiles ?? 100 },
    changed: async (change: WorkspaceChange) => void changes.push(change),
    ...(options.usage ? { usage: options.usage } : {}),
  };
  return { dir, changes, workspaceFor: async (ctx) => ({ workspace, readOnly: skillFolderMount(ctx) }) };
}

export type Call = [name: string, input: Record<string, unknown>];

/** Main calls `calls` in one assistant message; returns the tool results the model saw, in order. */
export async function callTools(h: Harness, ...calls: Call[]): Promise<Array<{ content: string; error: boolean }>> {
  let results: Array<{ content: string; error: boolean }> = [];
  h.fake.script(reply(...calls.map(([name, input]) => toolUse(name, input))), (req) => {
    results = resultTexts(req);
    return text("done");
  });
  expect(await h.say("go")).toEqual(["main: done"]);
  expect(h.fake.rejected()).toEqual([]);
  return results;
}

/** The same as `callTools` for one call. */
export async function callTool(h: Harness, name: string, input: Record<string, unknown>): Promise<{ content: string; error: boolean }> {
  return (await callTools(h, [name, input]))[0]!;
}

/** A skill (given by name) calls `calls` after main hands over to it; returns what the skill got back. */
export async function skillCalls(h: Harness, skill: string, ...calls: Call[]): Promise<Array<{ content: string; error: boolean }>> {
  let results: Array<{ content: string; error: boolean }> = [];
  h.fake.script(
    reply(toolUse("use_skill", { name: skill, message: "go" })),
    reply(...calls.map(([name, input]) => toolUse(name, input))),
    (req) => {
      results = resultTexts(req);
      return reply(toolUse("complete", { result: "done" }));
    },
    text("done"),
  );
  expect(await h.say("go")).toEqual(["main: done"]);
  expect(h.fake.rejected()).toEqual([]);
  return results;
}
