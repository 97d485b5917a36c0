// The example skills shipped in skills/ are what a new user copies first: `npm run skills -- validate` finds
// nothing to warn about in them.
import { expect, it } from "vitest";
import { run } from "../integration/child-process.js";

it("the skills shipped in skills/ validate with no errors and no warnings", async () => {
  const proc = run("src/cli/skills.ts", ["validate", "skills"], {});
  expect(await proc.exited).toBe(0);
  expect(proc.lines).toEqual(["0 errors, 0 warnings"]);
  expect(proc.stderr).toBe("");
});
