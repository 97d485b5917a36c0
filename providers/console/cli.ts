import { join } from "node:path";
import { createApp, startOrExit } from "../../src/app.js";
import { loadConfigOrExit } from "../../src/config.js";
import { logPlan } from "../../src/log.js";
import { installProcessGuard } from "../../src/process-guard.js";
import { secretsOf } from "../../src/secrets.js";
import { loadMcpConfigOrExit } from "../../src/mcp/load.js";
import { handleStopSignals } from "../../src/shutdown.js";
import { startConsole } from "./console.js";
import { terminalLogger } from "./terminal-log.js";

// `npm run chat [-- --jsonl] [--session NAME] [--user NAME]`: the terminal chat on its own.
// End of input finishes pending work and exits 0.
function arg(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

// Errors only by default: the chat itself tells the user what went wrong.
const config = loadConfigOrExit({ LOG_LEVEL: "error" });
const jsonl = process.argv.includes("--jsonl");
const plan = logPlan({
  ttyChat: !jsonl && process.stdin.isTTY === true,
  stderrTTY: process.stderr.isTTY === true,
  format: config.LOG_FORMAT,
  level: config.LOG_LEVEL,
  dataDir: config.DATA_DIR,
});
// mcp.json is read before the logger exists: its header and env values are secrets the logs must never show.
const mcp = loadMcpConfigOrExit(config.MCP_CONFIG);
const { log, terminal } = terminalLogger(plan, [...secretsOf(config, process.env), ...mcp.secrets]);
// An error escaping every handler before the chat runs fails the start (exit 1) instead of leaving a chat that never opens.
let failStart = (): void => process.exit(1);
const guard = installProcessGuard(log, { onStartFailure: () => failStart() });
const app = await startOrExit(() => createApp(config, log, undefined, { mcp }));
const chat = startConsole(app.gateway, {
  jsonl,
  exitOnEnd: true,
  fileLimits: { maxFileBytes: config.MAX_FILE_BYTES, maxFilesPerMessage: config.MAX_FILES_PER_MESSAGE, maxSessionBytes: config.MAX_SESSION_FILE_BYTES },
  filesDir: join(config.DATA_DIR, "files"),
  ...(plan.to === "file" ? { logFile: plan.file } : {}),
  ...(arg("--session") ? { session: arg("--session")! } : {}),
  ...(arg("--user") ? { user: arg("--user")! } : {}),
});
terminal?.attach((line) => chat.notice(line));
const shutdown = handleStopSignals({
  log,
  plan,
  quiet: () => {
    chat.stop();
    terminal?.detach();
  },
  async stop() {
    await app.close();
  },
});
failStart = () => void shutdown("startup failure", 1);
await app.gateway.recover();
await app.catalog.watch();
guard.serving();
await chat.done;
// End of input, and the pending work is done.
await shutdown("end of input");
