import { relative } from "node:path";
import type { Problem } from "./definition.js";

/**
 * The problems of one file, each one line: `<file>[:<line>[:<column>]]: <what is wrong and what to do>`.
 * Lines count from the top of the file, so an editor can jump there.
 */
export class FileProblems {
  private count = 0;

  constructor(
    readonly file: string,
    private readonly into: Problem[],
  ) {}

  error(message: string, line?: number, column?: number): void {
    this.add("error", message, line, column);
  }

  warning(message: string, line?: number, column?: number): void {
    this.add("warning", message, line, column);
  }

  /** An error in strict mode (`validate`), a warning when loading. */
  rule(strict: boolean, message: string, line?: number): void {
    this.add(strict ? "error" : "warning", message, line);
  }

  /** True when this file has had an error: the definition is then skipped. */
  get failed(): boolean {
    return this.count > 0;
  }

  private add(severity: Problem["severity"], message: string, line?: number, column?: number): void {
    if (severity === "error") this.count++;
    const where = line === undefined ? "" : column === undefined ? `:${line}` : `:${line}:${column}`;
    this.into.push({ severity, message: `${display(this.file)}${where}: ${message}` });
  }
}

/** A path relative to the working directory when it is inside it, for messages. */
export function display(path: string): string {
  const rel = relative(process.cwd(), path);
  return rel.startsWith("..") ? path : rel;
}

/** `a`, `a and b`, `a, b and c`. */
export function listing(items: readonly string[]): string {
  if (items.length <= 1) return items.join("");
  return `${items.slice(0, -1).join(", ")} and ${items[items.length - 1]}`;
}
