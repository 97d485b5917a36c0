// Every backend of BACKENDS runs the Store contract: each has its file (contract-*.test.ts) naming it.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";
import { BACKENDS } from "./contract/backends.js";

it("each Store backend has a contract file of its own", () => {
  const dir = import.meta.dirname;
  const named = readdirSync(dir)
    .filter((f) => /^contract-.*\.test\.ts$/.test(f))
    .flatMap((f) => [...readFileSync(join(dir, f), "utf8").matchAll(/storeContract\("([^"]+)"\)/g)].map((m) => m[1]!));
  const byName = (a: string, b: string) => a.localeCompare(b);
  expect(named.sort(byName)).toEqual(BACKENDS.map((b) => b.name).sort(byName));
});
