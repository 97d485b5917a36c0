// The durability rule for commands: a Bash call cut off by a SIGKILL of the gateway is never run again by the
// recovery. Its marker (the frame's running tool use) was committed before the command started; the restarted
// process answers the call with a note telling the agent to check the workspace, and the workspace holds what was
// saved before the command (the half-run command's files were never saved). A real `npm run chat` process, real
// bubblewrap, the strict fake Messages API, SQLite on disk.
import { existsSync, mkdirSync, watch } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";
import { reply, text, toolUse } from "../fakes/anthropic/server.js";
import { resultTexts } from "../helpers/requests.js";
import { describeSandbox } from "../helpers/sandbox.js";
import { chatWorld } from "./chat-process.js";

const world = chatWorld();
const chat = () => world.chat();

/** Resolves once a file named `name` appears anywhere under `dir`. */
function appears(dir: string, name: string): Promise<void> {
  mkdirSync(dir, { recursive: true, mode: 0o711 });
  return new Promise((resolve) => {
    const watcher = watch(dir, { recursive: true }, (_event, file) => {
      if (file?.toString().endsWith(name)) {
        watcher.close();
        resolve();
      }
    });
  });
}

describeSandbox("a command cut off by a restart", () => {
  it("is answered as interrupted after the restart, not run again, and its unsaved files are not kept", async () => {
    const workspaces = join(world.defs.root, "data", "workspaces");
    const started = appears(workspaces, "started");
    world.fake.script(
      reply(
        toolUse("Write", { file_path: "kept.txt", content: "saved before\n" }),
        toolUse("Bash", { command: "echo run >> runs.txt && touch started && sleep 600" }, "toolu_cmd"),
      ),
    );
    const first = chat();
    first.send({ text: "run the long job" });
    await started;
    first.child.kill("SIGKILL");
    await first.exited;

    let interrupted: Array<{ content: string; error: boolean }> = [];
    let after: Array<{ content: string; error: boolean }> = [];
    world.fake.script(
      (req) => {
        interrupted = resultTexts(req);
        return reply(toolUse("Bash", { command: "ls -1; cat runs.txt 2>/dev/null | wc -l" }));
      },
      (req) => {
        after = resultTexts(req);
        return text("checked");
      },
    );
    const second = chat();
    second.child.stdin.end();
    expect(await second.exited).toBe(0);
    expect(interrupted.at(-1)).toEqual({
      content:
        "Bash: this command was started before a restart and may have run, wholly or in part; it was not run again. The workspace holds what was saved before it unless it finished: check the workspace before running it again.",
      error: true,
    });
    expect(after).toEqual([{ content: "kept.txt\n0", error: false }]);
    expect(second.lines.some((l) => l.includes("checked"))).toBe(true);
    expect(existsSync(workspaces)).toBe(true);
  });
});
