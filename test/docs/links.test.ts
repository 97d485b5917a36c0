// Every relative link of the README and docs/ leads to a file that exists, and to a heading that page has; every
// docs page that code, settings or scripts name exists. Pages move; nothing may keep pointing at the old place.
import { describe, expect, it } from "vitest";
import { brokenLinks, namedDocPaths, onDisk, type Files } from "./links.js";
import { anchorsOf, docFiles, filesUnder, read, slug } from "./markdown.js";

function inMemory(pages: Record<string, string>): Files {
  return {
    text: (path) => pages[path] ?? null,
    exists: (path) => path in pages || Object.keys(pages).some((p) => p.startsWith(`${path}/`)),
  };
}

describe("the docs' links", () => {
  it("lead to files that exist and to headings those pages have", () => {
    expect(docFiles()).toContain("docs/admin/configuration.md");
    expect(brokenLinks(docFiles(), onDisk)).toEqual([]);
  });

  it("name only docs pages that exist, from the code, the settings example and the scripts", () => {
    const files = [
      ...filesUnder("src", ".ts"),
      ...filesUnder("providers", ".ts"),
      ...filesUnder("bench", ".ts"),
      ...filesUnder("protocol-model", ""),
      ...filesUnder("scripts", ""),
      ".env.example",
      ".ci/run",
    ];
    const named = namedDocPaths(files, read);
    expect(named.length).toBeGreaterThan(0);
    expect(named.filter(({ path }) => !onDisk.exists(path))).toEqual([]);
  });

  it("are reported when a page, a heading or the repository's edge is missed; code and web links are left alone", () => {
    const pages = inMemory({
      "docs/admin/a.md": [
        "# A",
        "## Setting it up",
        "[b](b.md#intro) [up](../engineering/) [self](#setting-it-up)",
        "[gone](gone.md) [out](../../../x.md) [nothing](#nothing) [b's nothing](b.md#nothing)",
        "`[in code](nope.md)` [web](https://example.com/nope.md) <https://example.com>",
        "```",
        "[fenced](nope.md)",
        "```",
      ].join("\n"),
      "docs/admin/b.md": "# B\n\n## Intro\n",
      "docs/engineering/c.md": "# C\n",
    });
    expect(brokenLinks(["docs/admin/a.md"], pages)).toEqual([
      "docs/admin/a.md:4: gone.md — docs/admin/gone.md does not exist",
      "docs/admin/a.md:4: ../../../x.md — leads out of the repository",
      'docs/admin/a.md:4: #nothing — docs/admin/a.md has no heading "#nothing"',
      'docs/admin/a.md:4: b.md#nothing — docs/admin/b.md has no heading "#nothing"',
    ]);
  });

  it("use GitHub's anchors for headings", () => {
    expect(slug("The call protocol (`protocol-model/calls.pml`)")).toBe("the-call-protocol-protocol-modelcallspml");
    expect(slug("Structured results (`output_schema`)")).toBe("structured-results-output_schema");
    expect(slug("A user's data: export and erasure")).toBe("a-users-data-export-and-erasure");
    expect(slug("In the browser: `/admin`")).toBe("in-the-browser-admin");
    expect(slug("Outbound HTTP from the model (http_request)")).toBe("outbound-http-from-the-model-http_request");
    expect([...anchorsOf('# X\n## Limits\n## Limits\n<a id="old-name"></a>\n```\n# not a heading\n```\n')]).toEqual(["x", "limits", "limits-1", "old-name"]);
  });
});
