import { createApp, startOrExit } from "../../src/app.js";
import { loadConfigOrExit } from "../../src/config.js";
import { createLogger } from "../../src/log.js";
import { installProcessGuard } from "../../src/process-guard.js";
import { secretsOf } from "../../src/secrets.js";
import { startConsole } from "./console.js";

// `npm run chat [-- --jsonl] [--session NAME] [--user NAME]`: the terminal chat on its own.
// End of input finishes pending work and exits 0.
function arg(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

// Errors only by default: the chat itself tells the user what went wrong.
const config = loadConfigOrExit({ LOG_LEVEL: "error" });
const log = createLogger(config.LOG_LEVEL, 2, secretsOf(config));
installProcessGuard(log);
const app = await startOrExit(() => createApp(config, log));
const chat = startConsole(app.gateway, {
  jsonl: process.argv.includes("--jsonl"),
  exitOnEnd: true,
  ...(arg("--session") ? { session: arg("--session")! } : {}),
  ...(arg("--user") ? { user: arg("--user")! } : {}),
});
await app.gateway.recover();
await app.catalog.watch();

const stop = async () => {
  await app.close();
  process.exit(0);
};
process.on("SIGINT", () => void stop());
process.on("SIGTERM", () => void stop());
await chat.done;
await app.close();
process.exit(0);
