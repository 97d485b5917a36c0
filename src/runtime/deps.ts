import { randomUUID } from "node:crypto";

export interface Clock {
  now(): number;
}
export interface Ids {
  /** A new unique id with a readable prefix, e.g. "task_…". */
  next(prefix: string): string;
}

export const systemClock: Clock = { now: () => Date.now() };
export const randomIds: Ids = { next: (prefix) => `${prefix}_${randomUUID().replaceAll("-", "")}` };

export interface RuntimeSettings {
  defaultModel: string;
  maxIterations: number;
}
