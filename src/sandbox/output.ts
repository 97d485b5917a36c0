// A command's stdout and stderr under one byte budget. Both streams are read to the end (a writer blocked on a
// full pipe would otherwise hang until its timeout) but only the first and the last bytes of each are kept, so
// memory stays bounded whatever the command prints, and an error at the end of a long output is still shown.
import type { Captured } from "./types.js";

const cutMarker = (bytes: number) => `[… ${bytes} bytes cut …]`;

/**
 * The whole lines before the cut of a stream that was cut: for output read line by line (a list of files, search
 * results), where the end after the cut would start mid-line and the marker would read as a line of its own.
 */
export function linesBeforeCut(text: string): string {
  const at = text.search(/\n\[… \d+ bytes cut …\]\n/);
  if (at === -1) return text;
  const head = text.slice(0, at);
  return head.slice(0, head.lastIndexOf("\n") + 1);
}

class StreamCapture {
  total = 0;
  private head: Buffer[] = [];
  private headBytes = 0;
  private tail: Buffer[] = [];
  private tailBytes = 0;

  constructor(private readonly keep: number) {}

  add(chunk: Buffer): void {
    this.total += chunk.length;
    const forHead = Math.min(chunk.length, this.keep - this.headBytes);
    if (forHead > 0) {
      this.head.push(chunk.subarray(0, forHead));
      this.headBytes += forHead;
    }
    const rest = chunk.subarray(Math.max(forHead, 0));
    if (rest.length === 0) return;
    this.tail.push(rest);
    this.tailBytes += rest.length;
    while (this.tail.length > 1 && this.tailBytes - this.tail[0]!.length >= this.keep) {
      this.tailBytes -= this.tail.shift()!.length;
    }
  }

  /** The stream shown in at most `budget` bytes: all of it, or its start and its end around a marker. */
  render(budget: number): string {
    const all = Buffer.concat([...this.head, ...this.tail]);
    if (this.total <= budget) return all.toString("utf8");
    const head = Buffer.concat(this.head);
    const start = head.subarray(0, charStart(head, Math.min(head.length, Math.ceil(budget / 2))));
    // A short tail means nothing was dropped yet, so the end may start inside the head.
    const tailAll = this.tailBytes >= Math.floor(budget / 2) ? Buffer.concat(this.tail) : all;
    const end = tailAll.subarray(charStart(tailAll, Math.max(0, tailAll.length - Math.floor(budget / 2)), true));
    const cut = this.total - start.length - end.length;
    return `${start.toString("utf8")}\n${cutMarker(cut)}\n${end.toString("utf8")}`;
  }
}

/**
 * Where a cut at `at` falls on a character boundary: backwards to the start of the character that `at` is in
 * (for an end), or, with `forward`, past any continuation bytes (for a start).
 */
function charStart(bytes: Buffer, at: number, forward = false): number {
  let i = at;
  const continuation = (n: number) => n < bytes.length && (bytes[n]! & 0xc0) === 0x80;
  if (forward) {
    while (continuation(i)) i++;
    return i;
  }
  while (i > 0 && continuation(i)) i--;
  return i;
}

export class OutputCapture {
  private readonly stdout: StreamCapture;
  private readonly stderr: StreamCapture;

  /** `limit`: bytes of output shown at most, both streams together. */
  constructor(private readonly limit: number) {
    this.stdout = new StreamCapture(limit);
    this.stderr = new StreamCapture(limit);
  }

  add(stream: "stdout" | "stderr", chunk: Buffer): void {
    (stream === "stdout" ? this.stdout : this.stderr).add(chunk);
  }

  /** Splits the budget: stderr keeps at least a quarter of it when stdout is long, and neither wastes the other's share. */
  result(): Captured {
    const out = this.stdout.total;
    const err = this.stderr.total;
    const totalBytes = out + err;
    if (totalBytes <= this.limit) {
      return { stdout: this.stdout.render(out), stderr: this.stderr.render(err), totalBytes, truncated: false };
    }
    let errBudget = Math.min(err, Math.max(Math.floor(this.limit / 4), this.limit - out));
    const outBudget = Math.min(out, this.limit - errBudget);
    errBudget = Math.min(err, this.limit - outBudget);
    return { stdout: this.stdout.render(outBudget), stderr: this.stderr.render(errBudget), totalBytes, truncated: true };
  }
}
