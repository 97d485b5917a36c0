// The chat commands' table: who may send each one into someone else's conversation, which ones interrupt the running
// turn, and the menu the platforms show, as users have known them.
import { describe, expect, it } from "vitest";
import { CHAT_COMMANDS } from "../../src/gateway/command-table.js";
import { anyoneMay, COMMAND_MENU, interrupts, parseCommand, type ChatCommand } from "../../src/gateway/commands.js";

const names = Object.keys(CHAT_COMMANDS) as ChatCommand[];

describe("the command table", () => {
  it("lets anyone read or touch their own things, and only the owner do the rest", () => {
    expect(names.filter(anyoneMay).sort()).toEqual(["approve", "context", "deny", "forget", "memory", "skills", "status"]);
  });

  it("has /cancel and /reset interrupt the turn; every other command is answered beside it", () => {
    expect(names.filter(interrupts).sort()).toEqual(["cancel", "reset"]);
  });

  it("gives the platforms the same menu, in the same order", () => {
    expect(COMMAND_MENU.map((m) => m.command)).toEqual(["start", "skills", "status", "context", "memory", "schedules", "usage", "cancel", "reset"]);
    expect(COMMAND_MENU.find((m) => m.command === "cancel")?.description).toBe("Stop the running task");
  });

  it("is what parsing knows: every entry parses, nothing else does", () => {
    for (const name of names) expect(parseCommand(`/${name}`, false)).toBe(name);
    expect(parseCommand("/schedule", false)).toBeNull();
    expect(parseCommand("/toString", false)).toBeNull();
  });
});
