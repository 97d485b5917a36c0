// The workspace tools as `npm run chat` offers them (WORKSPACE=on by default): a real gateway process, the real SDK
// against the strict fake Messages API, real bubblewrap. Main writes a file, reads it back and runs a command on it;
// a skill runs its bundled Python script on a CSV in the workspace; the files are there after a SIGKILL and restart.
import { readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";
import { reply, text, toolUse } from "../fakes/anthropic/server.js";
import { skillFile } from "../helpers/harness.js";
import { resultTexts } from "../helpers/requests.js";
import { describeSandbox } from "../helpers/sandbox.js";
import { chatWorld } from "./chat-process.js";

const SKILL = {
  ...skillFile("totals", "Run `python3 {baseDir}/scripts/total.py sales.csv` and report its output.", "allowed-tools: Bash(python3:*) Read Write\n"),
  "skills/totals/scripts/total.py": "import csv, sys\nrows = list(csv.DictReader(open(sys.argv[1])))\nprint('total', sum(int(r['amount']) for r in rows))\n",
};

const world = chatWorld(SKILL);
const chat = () => world.chat();

type Results = Array<{ content: string; error: boolean }>;

/** Scripts one reply of tool calls and a final text; resolves with the results the model got. */
function scriptCalls(...calls: Array<[string, Record<string, unknown>]>): Promise<Results> {
  return new Promise((resolve) => {
    world.fake.script(reply(...calls.map(([name, input]) => toolUse(name, input))), (req) => {
      resolve(resultTexts(req));
      return text("done");
    });
  });
}

describeSandbox("the workspace tools in npm run chat", () => {
  it("main writes a file, reads it back and runs a command on it; the workspace outlives a SIGKILL and its folder", async () => {
    const results = scriptCalls(
      ["Write", { file_path: "notes.txt", content: "alpha\nbeta\n" }],
      ["Read", { file_path: "/workspace/notes.txt" }],
      [
        "Bash",
        {
          command:
            "wc -l notes.txt && sha1sum notes.txt | cut -c1-8 && mkdir -p sub && ln -s ../notes.txt sub/link && ln -s /etc/passwd pw && printf x > \"$(printf 'odd\\nname')\"",
        },
      ],
    );
    const first = chat();
    first.send({ text: "take notes" });
    await first.line((l) => l.includes("done"));
    expect(await results).toEqual([
      { content: "File created successfully at: /workspace/notes.txt", error: false },
      { content: "     1\talpha\n     2\tbeta", error: false },
      { content: "2 notes.txt\n9269a714", error: false },
    ]);
    const offered = world.fake.accepted()[0]!.tools?.map((t) => (t as { name: string }).name) ?? [];
    expect(offered).toEqual(expect.arrayContaining(["Read", "Write", "Edit", "Glob", "Grep", "Bash"]));
    // One opaque folder per session, not named after anything the user typed.
    const workspaces = join(world.defs.root, "data", "workspaces");
    expect(readdirSync(workspaces)).toEqual([expect.stringMatching(/^[0-9a-f]{32}$/)]);
    first.child.kill("SIGKILL");
    await first.exited;
    // The folder is gone too (a new machine, a replica that never had it): the files come back from the database,
    // the symlink that stayed inside with them; the one planted towards /etc/passwd was never kept.
    rmSync(workspaces, { recursive: true, force: true });

    const again = scriptCalls(["Read", { file_path: "sub/link" }], ["Bash", { command: "ls -1bR && cat \"$(printf 'odd\\nname')\"" }]);
    const second = chat();
    second.send({ text: "read my notes" });
    await second.line((l) => l.includes("done"));
    expect(await again).toEqual([
      { content: "     1\talpha\n     2\tbeta", error: false },
      { content: ".:\nnotes.txt\nodd\\nname\nsub\n\n./sub:\nlink\nx", error: false },
    ]);
    second.child.stdin.end();
    expect(await second.exited).toBe(0);
  });

  it("a skill runs its bundled Python script on a CSV the main agent wrote to the workspace", async () => {
    let got: Results = [];
    world.fake.script(
      reply(
        toolUse("Write", { file_path: "sales.csv", content: "item,amount\napples,3\npears,4\n" }),
        toolUse("use_skill", { name: "totals", message: "sum sales.csv" }),
      ),
      reply(toolUse("Bash", { command: "python3 /skills/totals/scripts/total.py sales.csv" })),
      (req) => {
        got = resultTexts(req);
        return reply(toolUse("complete", { result: got[0]!.content }));
      },
      text("the total is 7"),
    );
    const p = chat();
    p.send({ text: "total my sales" });
    await p.line((l) => l.includes("the total is 7"));
    expect(got).toEqual([{ content: "total 7", error: false }]);
    p.child.stdin.end();
    expect(await p.exited).toBe(0);
  });
});
