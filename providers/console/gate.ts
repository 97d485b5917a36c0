import type { Writable } from "node:stream";

/**
 * `output` as readline sees it: the same terminal (size, events), but what readline writes while `open()` is false
 * is dropped. readline redraws its whole line on the next prompt(true), so nothing it held back is lost.
 */
export function gated(output: Writable, open: () => boolean): Writable {
  const write = (chunk: unknown, encoding?: unknown, callback?: unknown): boolean => {
    if (open()) return (output.write as (...args: unknown[]) => boolean)(chunk, encoding, callback);
    const done = typeof encoding === "function" ? encoding : callback;
    if (typeof done === "function") queueMicrotask(() => (done as () => void)());
    return true;
  };
  return new Proxy(output, {
    get(target, property) {
      if (property === "write") return write;
      const value = Reflect.get(target, property, target) as unknown;
      return typeof value === "function" ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}
