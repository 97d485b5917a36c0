// Received files in the workspace, as `npm run chat` runs them: a real gateway process, the real SDK against the
// strict fake Messages API, real bubblewrap. A CSV sent with a message is in the workspace's top folder when the
// turn starts, the agent is told its path and Bash reads it; a file past the workspace's limits is announced, not
// placed; the same name sent again after the agent changed the file gets a new name; all of it after a SIGKILL.
import { randomBytes } from "node:crypto";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";
import { reply, text, toolUse, type MessagesRequest } from "../fakes/anthropic/server.js";
import { resultTexts } from "../helpers/requests.js";
import { describeSandbox } from "../helpers/sandbox.js";
import { chatWorld } from "./chat-process.js";

// The smallest workspace there can be (1 MiB), so that a file of a little more is refused.
const world = chatWorld({}, { WORKSPACE_MAX_BYTES: String(1024 * 1024) });
const CSV = "region,sales\nnorth,12\nsouth,7\n";

type Results = Array<{ content: string; error: boolean }>;
/** The text blocks of the newest user message (what the files were announced with). */
const announced = (req: MessagesRequest): string[] =>
  (req.messages.filter((m) => m.role === "user").at(-1)!.content as Array<{ type: string; text?: string }>).flatMap((b) => (b.type === "text" ? [b.text!] : []));

describeSandbox("received files in the workspace", () => {
  it("are placed when the turn starts, named to the agent by path, read by Bash, and kept through a SIGKILL", async () => {
    const csv = join(world.defs.root, "report.csv");
    const big = join(world.defs.root, "big.bin");
    writeFileSync(csv, CSV);
    writeFileSync(big, randomBytes(1024 * 1024 + 1));

    let lines: string[] = [];
    let results: Results = [];
    world.fake.script(
      (req) => {
        lines = announced(req);
        return reply(toolUse("Bash", { command: "wc -l report.csv && echo 'west,1' >> report.csv && ls -1" }));
      },
      (req) => {
        results = resultTexts(req);
        return text("three lines");
      },
    );
    const first = world.chat();
    first.send({ text: "how long is it?", files: [csv, big] });
    await first.line((l) => l.includes("three lines"));
    expect(lines).toEqual([
      "how long is it?",
      expect.stringMatching(/^\[Attached file: report\.csv \(text\/csv, 30 bytes\), in the workspace at \/workspace\/report\.csv\]$/),
      expect.stringMatching(
        /^\[Attached file: big\.bin \(application\/octet-stream, .*\); not in the workspace: the workspace has no room for big\.bin \(1 MB\): it holds 30 bytes in 1 file, and takes at most 1 MB in 2000 files \(WORKSPACE_MAX_BYTES, WORKSPACE_MAX_FILES\); its contents are not shown to you\. It is stored with the conversation\.\]$/,
      ),
    ]);
    expect(results).toEqual([{ content: "3 report.csv\nreport.csv", error: false }]);

    // The same name again: the agent's changed report.csv stays as it is, the new one takes a free name.
    world.fake.script(
      (req) => {
        lines = announced(req);
        return reply(toolUse("Bash", { command: "ls -1 && wc -l report.csv 'report (2).csv'" }));
      },
      (req) => {
        results = resultTexts(req);
        return text("both there");
      },
    );
    first.send({ text: "here it is again", files: [csv] });
    await first.line((l) => l.includes("both there"));
    expect(lines[1]).toContain("in the workspace at /workspace/report (2).csv]");
    expect(results).toEqual([{ content: "report (2).csv\nreport.csv\n 4 report.csv\n 3 report (2).csv\n 7 total", error: false }]);
    first.child.kill("SIGKILL");
    await first.exited;

    // A restart on a machine without the folder: the workspace comes back from the database, received files too.
    rmSync(join(world.defs.root, "data", "workspaces"), { recursive: true, force: true });
    world.fake.script(reply(toolUse("Bash", { command: "cat 'report (2).csv'" })), (req) => {
      results = resultTexts(req);
      return text("still there");
    });
    const second = world.chat();
    second.send({ text: "still there?" });
    await second.line((l) => l.includes("still there"));
    expect(results).toEqual([{ content: CSV.trimEnd(), error: false }]);
    expect(world.fake.rejected()).toEqual([]);
    second.child.stdin.end();
    expect(await second.exited).toBe(0);
  });
});
