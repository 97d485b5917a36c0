// Sums a V8 .cpuprofile (`node --cpu-prof`) by function or by file: self time, and total time (the function and
// everything it called synchronously; an async function's continuations count under the microtask that ran them).
// Idle samples are left out, so the shares are of the time the process was busy.
//   node --import tsx bench/profile-sum.ts <file.cpuprofile> [how many rows, 30] [fn | file]
import { readFileSync } from "node:fs";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
}

const [file, rows = "30", by = "fn"] = process.argv.slice(2);
if (!file || (by !== "fn" && by !== "file")) {
  process.stderr.write("usage: node --import tsx bench/profile-sum.ts <file.cpuprofile> [rows] [fn | file]\n");
  process.exit(2);
}
const profile = JSON.parse(readFileSync(file, "utf8")) as Profile;
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of profile.nodes) for (const child of n.children ?? []) parent.set(child, n.id);
const idle = new Set(profile.nodes.filter((n) => n.callFrame.functionName === "(idle)").map((n) => n.id));
const samples = profile.samples.filter((s) => !idle.has(s));

const where = (url: string) =>
  url
    .replace(/^file:\/\//, "")
    .replace(/^.*\/node_modules\//, "npm:")
    .replace(`${process.cwd()}/`, "");
const keyOf = (n: ProfileNode) => (by === "file" ? where(n.callFrame.url) || "(native)" : `${n.callFrame.functionName || "(anonymous)"} ${where(n.callFrame.url)}`);

const self = new Map<string, number>();
const total = new Map<string, number>();
for (const sample of samples) {
  const leaf = keyOf(byId.get(sample)!);
  self.set(leaf, (self.get(leaf) ?? 0) + 1);
  const seen = new Set<string>();
  for (let id: number | undefined = sample; id !== undefined; id = parent.get(id)) {
    const key = keyOf(byId.get(id)!);
    if (seen.has(key)) continue; // a recursive call counts once
    seen.add(key);
    total.set(key, (total.get(key) ?? 0) + 1);
  }
}
const share = (count: number) => `${((100 * count) / samples.length).toFixed(1).padStart(5)} %`;
const print = (title: string, counts: Map<string, number>) => {
  process.stdout.write(`${title}\n`);
  for (const [key, count] of [...counts].sort((a, b) => b[1] - a[1]).slice(0, Number(rows))) process.stdout.write(`${share(count)}  ${key}\n`);
};
process.stdout.write(`${samples.length} busy samples (${profile.samples.length - samples.length} idle left out)\n`);
print("self", self);
if (by === "fn") print("total", total);
