// A command's output under one budget: both streams drained, the start and the end of each kept, characters
// never split, and stderr never crowded out by a long stdout.
import { describe, expect, it } from "vitest";
import { linesBeforeCut, OutputCapture } from "../../src/sandbox/output.js";

const feed = (capture: OutputCapture, stream: "stdout" | "stderr", text: string, chunk = 7) => {
  const bytes = Buffer.from(text);
  for (let i = 0; i < bytes.length; i += chunk) capture.add(stream, bytes.subarray(i, i + chunk));
};

describe("OutputCapture", () => {
  it("keeps everything within the budget", () => {
    const capture = new OutputCapture(100);
    feed(capture, "stdout", "hello\n");
    feed(capture, "stderr", "warning\n");
    expect(capture.result()).toEqual({ stdout: "hello\n", stderr: "warning\n", totalBytes: 14, truncated: false });
  });

  it("keeps the start and the end of a long stream and says how much was cut", () => {
    const capture = new OutputCapture(20);
    const text = Array.from({ length: 100 }, (_, i) => String(i).padStart(2, "0")).join("");
    feed(capture, "stdout", text);
    const result = capture.result();
    expect(result.truncated).toBe(true);
    expect(result.totalBytes).toBe(200);
    expect(result.stdout).toBe(`${text.slice(0, 10)}\n[… 180 bytes cut …]\n${text.slice(190)}`);
  });

  it("never splits a character at a cut", () => {
    const capture = new OutputCapture(9);
    feed(capture, "stdout", "ééééééééééééééé", 3);
    const { stdout } = capture.result();
    expect(stdout).not.toContain("\uFFFD");
    expect(stdout).toMatch(/^é+\n\[… \d+ bytes cut …\]\né+$/);
  });

  it("leaves stderr at least a quarter of the budget when stdout is long", () => {
    const capture = new OutputCapture(40);
    feed(capture, "stdout", "x".repeat(1000));
    feed(capture, "stderr", "E".repeat(100));
    const { stdout, stderr } = capture.result();
    expect(stderr.replace(/\n\[… \d+ bytes cut …\]\n/, "")).toHaveLength(10);
    expect(stdout.replace(/\n\[… \d+ bytes cut …\]\n/, "")).toHaveLength(30);
  });

  it("gives a short stream all of it and the long one the rest", () => {
    const capture = new OutputCapture(40);
    feed(capture, "stdout", "x".repeat(1000));
    feed(capture, "stderr", "oops\n");
    const { stdout, stderr } = capture.result();
    expect(stderr).toBe("oops\n");
    expect(stdout.replace(/\n\[… \d+ bytes cut …\]\n/, "")).toHaveLength(35);
  });
});

describe("linesBeforeCut", () => {
  it("keeps the whole lines before a cut, for output read line by line", () => {
    const capture = new OutputCapture(30);
    feed(capture, "stdout", Array.from({ length: 40 }, (_, i) => `/workspace/file${i}.txt`).join("\n"));
    const { stdout } = capture.result();
    expect(linesBeforeCut(stdout)).toBe("");
    const wide = new OutputCapture(60);
    feed(wide, "stdout", Array.from({ length: 40 }, (_, i) => `/w/f${i}`).join("\n"));
    expect(linesBeforeCut(wide.result().stdout)).toBe("/w/f0\n/w/f1\n/w/f2\n/w/f3\n/w/f4\n");
    expect(linesBeforeCut("a\nb\n")).toBe("a\nb\n");
  });
});
