// Providers talk to the gateway through one facade (src/gateway/index.ts) and nothing else from inside src/: no
// store, no runtime, no other gateway file. The imports are read from the source text, so a new one that breaks the
// rule fails here before review.
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "../..");

/** The facade, and the pure helpers every provider may share (types, timers, logging, file intake, tokens). */
const ALLOWED = [
  "src/gateway/index.ts",
  "src/runtime/deps.ts",
  "src/log.ts",
  "src/secret-tokens.ts",
  "src/files/types.ts",
  "src/files/limits.ts",
  "src/files/intake.ts",
  "src/files/names.ts",
  "src/files/ids.ts",
  "src/files/download.ts",
  "src/files/detect.ts",
];

/** The terminal chat's entry point composes the app, like src/main.ts: it is the composition root, not a provider. */
const COMPOSITION = ["providers/console/cli.ts"];

function filesUnder(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? filesUnder(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : [],
  );
}

/** Every module `source` imports or re-exports (static and dynamic), as written. */
export function importsOf(source: string): string[] {
  const found = [
    ...source.matchAll(/^\s*(?:import|export)\s[^;]*?\sfrom\s+["']([^"']+)["']/gm),
    ...source.matchAll(/^\s*import\s+["']([^"']+)["']/gm),
    ...source.matchAll(/\bimport\(\s*["']([^"']+)["']\s*\)/g),
  ];
  return found.map((m) => m[1]!);
}

/** The files of src/ that `file` imports, repository-relative with .ts. */
function srcImports(file: string): string[] {
  return importsOf(readFileSync(join(ROOT, file), "utf8"))
    .filter((spec) => spec.startsWith("."))
    .map((spec) => relative(ROOT, join(ROOT, file, "..", spec)).replace(/\.js$/, ".ts"))
    .filter((path) => path.startsWith("src/"));
}

describe("providers", () => {
  it("import nothing from src/ but the gateway's facade and the shared helpers", () => {
    const broken = filesUnder("providers")
      .filter((file) => !COMPOSITION.includes(file))
      .flatMap((file) =>
        srcImports(file)
          .filter((path) => !ALLOWED.includes(path))
          .map((path) => `${file} imports ${path}`),
      );
    expect(broken).toEqual([]);
  });

  it("are read correctly: static, type-only, multi-line and dynamic imports and re-exports count", () => {
    const source = [
      'import { a } from "../../src/store/store.js";',
      'import type {\n  B,\n  C,\n} from "../../src/runtime/orchestrator.js";',
      'export { d } from "../../src/gateway/gateway.js";',
      'const e = await import("../../src/app.js");',
      'import "node:fs";',
    ].join("\n");
    expect(importsOf(source)).toEqual(["../../src/store/store.js", "../../src/runtime/orchestrator.js", "../../src/gateway/gateway.js", "node:fs", "../../src/app.js"]);
  });
});
