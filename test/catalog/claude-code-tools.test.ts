// Claude Code's tool names in a whitelist map onto the tools this gateway offers under the same names (the workspace
// tools, WebFetch, WebSearch), in each of Claude Code's forms; a switched-off one says how to switch it on.
import { rmSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { loadCatalog } from "../../src/catalog/loader.js";
import { writeDefinitions } from "../helpers/harness.js";

const STACK = ["use_skill", "use_agent", "call_agent", "complete", "report_back", "read_skill_file", "http_request"];
let root = "";
afterEach(() => {
  if (root) rmSync(root, { recursive: true, force: true });
  root = "";
});

function load(files: Record<string, string>, known: string[], disabled: Record<string, string> = {}) {
  const defs = writeDefinitions(files);
  root = defs.root;
  const catalog = loadCatalog(defs.skills, defs.agents, { env: {}, knownTools: known, disabledTools: disabled });
  return { ...catalog, warnings: catalog.warnings.map((m) => m.split(`${root}/`).join("")) };
}

const agent = (name: string, tools: string) => ({ [`agents/${name}.md`]: `---\nname: ${name}\ndescription: The ${name} agent.\ntools: ${tools}\n---\nWork.\n` });

describe("Claude Code's tool names", () => {
  it("are the tools of the same name here, rules in parentheses and all, with one note for the rules", () => {
    const catalog = load({ ...agent("reviewer", "Read, Grep, Glob, Bash(git diff:*) WebFetch WebSearch"), ...agent("docs", '["Read(*.md)", "Write"]') }, [
      ...STACK,
      "Read",
      "Write",
      "Edit",
      "Glob",
      "Grep",
      "Bash",
      "WebFetch",
      "WebSearch",
    ]);
    expect(catalog.agents.get("reviewer")!.tools).toEqual(["Read", "Grep", "Glob", "Bash", "WebFetch", "WebSearch"]);
    expect(catalog.agents.get("docs")!.tools).toEqual(["Read", "Write"]);
    expect(catalog.warnings).toContain(
      "agents/reviewer.md:4: tools: uses Bash(git diff:*) as Bash (the rule in parentheses is not enforced; Bash is confined as always). The agent is left with Read, Grep, Glob, Bash, WebFetch and WebSearch (and complete, which is always there)",
    );
  });

  it("switched off here, say how to switch them on", () => {
    const catalog = load(agent("searcher", "WebSearch, Bash(ls:*)"), STACK, { WebSearch: "WEB_SEARCH=on turns it on", Bash: "no sandbox here — install bubblewrap" });
    expect(catalog.agents.get("searcher")!.tools).toEqual([]);
    expect(catalog.warnings).toEqual([
      "agents/searcher.md:4: tools: switched off here: WebSearch: WEB_SEARCH=on turns it on and Bash(ls:*): no sandbox here — install bubblewrap; those are ignored. The agent is left with only complete, which is always there",
    ]);
  });
});
