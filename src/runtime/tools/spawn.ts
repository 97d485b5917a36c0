import { z } from "zod";
import { available, type Definition, type DefinitionKind } from "../../catalog/definition.js";
import { MODEL_ALIASES } from "../../catalog/models.js";
import type { StackFrame } from "../frame.js";
import { childSystemPrompt } from "../prompts.js";
import { checkCallRules, refusedSchema } from "./call-rules.js";
import { effectiveToolsFor } from "./registry.js";
import { filesProperty, filesToPass } from "./pass-files.js";
import { fail, type Tool, type ToolContext, type ToolOutput } from "./tool.js";
import type { FileRefBlock } from "../../llm/types.js";

const spawnInput = z.object({
  name: z.string().trim().min(1),
  message: z.string().trim().min(1),
  output_schema: z.unknown().optional(),
  files: z.unknown().optional(),
});

/** use_skill and use_agent: both build a child frame and hand it the conversation (or run it in batch). */
export function spawnTool(kind: DefinitionKind, toolNames: () => string[]): Tool {
  const name = kind === "skill" ? "use_skill" : "use_agent";
  return {
    spec: {
      name,
      description:
        kind === "skill"
          ? "Hand the conversation to a skill. It talks with the user directly until it finishes; its result then comes back to you as this tool's result. `message` must say everything the skill needs: it cannot see this conversation."
          : "Hand the conversation to an agent. It talks with the user directly until it finishes; its result then comes back to you as this tool's result. `message` must say everything the agent needs: it cannot see this conversation.",
      input_schema: {
        type: "object",
        properties: {
          name: { type: "string", description: `The ${kind}'s name, as listed in your instructions.` },
          message: { type: "string", description: `The task for the ${kind}, with all the context it needs.` },
          output_schema: {
            type: "object",
            description: `Optional JSON Schema (top-level type "object") for a structured result: the ${kind} must then finish with report_back, and you receive JSON that matches it.`,
          },
          files: filesProperty(kind),
        },
        required: ["name", "message"],
      },
    },
    // An interactive child is only a new frame: spawning it again after a restart is safe. A batch
    // child runs tools of its own, so an interrupted batch run is reported, not repeated.
    idempotent: (input, ctx) => {
      const def = lookup(kind, ctx.catalog, input.name);
      return def?.mode !== "batch";
    },
    async run(input, ctx): Promise<ToolOutput> {
      const parsed = spawnInput.safeParse(input);
      if (!parsed.success) return fail(`${name} needs a non-empty "name" and "message"`);
      const { frame } = ctx;
      if (kind === "skill" && frame.isSkillAgent) {
        return fail("skills cannot call use_skill: finish with complete(result) and let your caller choose the next skill");
      }
      const def = lookup(kind, ctx.catalog, parsed.data.name);
      if (!def || def.unavailable) {
        const usable = available(kind === "skill" ? ctx.catalog.skills : ctx.catalog.agents).map((d) => d.name);
        const why = def?.unavailable ? `the ${kind} "${def.name}" is unavailable: it ${def.unavailable}` : `there is no ${kind} named "${parsed.data.name}"`;
        return fail(`${why}; available: ${usable.length ? usable.join(", ") : "none"}`);
      }
      const refusal = checkCallRules(frame, `${kind}:${def.name}`, ctx.settings.callDepthMax);
      if (refusal) return fail(refusal);
      const optedOut = refusedSchema(def, parsed.data.output_schema);
      if (optedOut) return fail(`${name} refused: ${optedOut}. No ${kind} was started.`);
      // A schema is checked before anything is spawned: a bad one is the caller's mistake to fix.
      const schema = parsed.data.output_schema ?? def.outputSchema ?? null;
      if (schema !== null) {
        const compiled = await ctx.schemas.compile(schema);
        if (!compiled.ok) return fail(`${name} refused: ${compiled.error}. No ${kind} was started.`);
      }
      const passed = await filesToPass(frame, parsed.data.files, ctx);
      if (!passed.ok) return fail(`${name} refused: ${passed.error}. No ${kind} was started.`);
      const previous = def.carryover ? await ctx.previousRun(`${kind}:${def.name}`) : null;
      const message = previous ? `A summary of your previous run in this conversation:\n${previous}\n\nYour new task:\n${parsed.data.message}` : parsed.data.message;
      const child = buildChildFrame(def, frame, message, ctx, toolNames(), schema as Record<string, unknown> | null, def.mode, passed.files);
      if (def.mode === "batch") return ctx.runBatch(child);
      return ctx.activateChild(child);
    },
  };
}

function lookup(kind: DefinitionKind, catalog: ToolContext["catalog"], name: unknown): Definition | undefined {
  if (typeof name !== "string") return undefined;
  return (kind === "skill" ? catalog.skills : catalog.agents).get(name.trim());
}

export function resolveModel(requested: string | null, parentModel: string): string {
  if (!requested || requested === "inherit") return parentModel;
  return Object.hasOwn(MODEL_ALIASES, requested) ? MODEL_ALIASES[requested]! : requested;
}

export function buildChildFrame(
  def: Definition,
  parent: StackFrame,
  message: string,
  ctx: Pick<ToolContext, "ids" | "settings" | "toolUseId">,
  toolNames: string[],
  outputSchema: Record<string, unknown> | null = def.outputSchema,
  mode: Definition["mode"] = def.mode,
  /** Files the parent passes on: the child's first message carries them. */
  files: readonly FileRefBlock[] = [],
): StackFrame {
  const agentName = `${def.kind}:${def.name}`;
  const effectiveTools = effectiveToolsFor(def.kind, toolNames, def.tools, outputSchema !== null);
  return {
    frameId: ctx.ids.next("frame"),
    agentName,
    agentType: def.kind,
    definitionName: def.name,
    systemPrompt: childSystemPrompt(def, outputSchema !== null, mode, effectiveTools),
    model: resolveModel(def.model, parent.model),
    environment: {},
    iteration: 0,
    maxIterations: def.maxIterations ?? ctx.settings.maxIterations,
    effectiveTools,
    isSkillAgent: def.kind === "skill",
    parentToolUseId: ctx.toolUseId,
    agentSessionId: ctx.ids.next("as"),
    mode,
    callChain: [...parent.callChain, agentName],
    runningToolUseId: null,
    outputSchema,
    reportAttempts: 0,
    contextTokens: 0,
    // A guarded frame cannot shed its guard by delegating: every child (interactive or batch) keeps the
    // parent's approval rules on top of its own definition's.
    approvalTools: [...new Set([...parent.approvalTools, ...def.requiresApproval])],
    // The user's memories, read-only, for definitions that ask (memory: true).
    ...(def.memory && parent.memories ? { memories: parent.memories } : {}),
    history: [{ role: "user", content: [{ type: "text", text: message }, ...files] }],
  };
}
