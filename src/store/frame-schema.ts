import { z } from "zod";
import type { FrameRecord } from "./store.js";

// Stored JSON is validated when read back: a hand-edited or truncated row must fail loudly, not half-load.
export const frameRecordSchema = z.object({
  frameId: z.string().min(1),
  agentName: z.string().min(1),
  agentType: z.enum(["main", "skill", "agent"]),
  definitionName: z.string().nullable(),
  systemPrompt: z.string(),
  model: z.string().min(1),
  environment: z.record(z.string(), z.string()),
  iteration: z.number().int().nonnegative(),
  maxIterations: z.number().int().positive(),
  effectiveTools: z.array(z.string()),
  isSkillAgent: z.boolean(),
  parentToolUseId: z.string().nullable(),
  agentSessionId: z.string().min(1),
  mode: z.enum(["interactive", "batch"]),
  callChain: z.array(z.string()),
  runningToolUseId: z.string().nullable(),
  // Added in a later version: rows written before it read back with the defaults.
  outputSchema: z.record(z.string(), z.unknown()).nullable().default(null),
  reportAttempts: z.number().int().nonnegative().default(0),
  contextTokens: z.number().int().nonnegative().default(0),
  approvalTools: z.array(z.string()).default([]),
  // Optional, not defaulted: a frame written without it reads back without it (the stack in memory and the stack
  // a restart loads must be equal).
  memories: z.string().nullable().optional(),
  traceparent: z.string().max(128).optional(),
}) satisfies z.ZodType<FrameRecord>;
