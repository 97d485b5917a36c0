import { loadConfigOrExit } from "../config.js";
import { unknownName, usageError } from "./usage.js";

// `npm run skills -- list`, `validate [path]` and `lock` for admins (skills-command.ts). validate exits 1 on any
// error, so it can guard an admin's own CI; warnings do not fail it. The command is checked before the catalog, the
// tools and MCP load.
const USAGE = "usage: npm run skills -- list\n       npm run skills -- validate [path]\n       npm run skills -- lock\n";
const COMMANDS = ["list", "validate", "lock"] as const;
const [command, path] = process.argv.slice(2);
if (!COMMANDS.includes(command as (typeof COMMANDS)[number])) {
  usageError(USAGE, command === undefined || command === "--help" || command === "-h" ? undefined : unknownName("command", command, [...COMMANDS]));
}
const config = loadConfigOrExit({ LOG_LEVEL: "error" });
const { runSkills } = await import("./skills-command.js");
process.exit(await runSkills(command as (typeof COMMANDS)[number], path, config, process.stdout, process.stderr));
