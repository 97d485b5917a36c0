// The chat commands for scheduled jobs, read before the model like the others: /schedules lists the sender's jobs in
// this chat, /unschedule <id> cancels one, /timezone [IANA name] shows or sets the sender's time zone.
import { JOB_ID } from "../schedules/input.js";
import { checkZone, shown } from "../schedules/zone.js";

export type ScheduleCommand =
  | { command: "schedules" }
  | { command: "unschedule"; id: string }
  /** `zone` null: show the sender's zone. */
  | { command: "timezone"; zone: string | null }
  /** The command was meant but its argument is wrong: `error` says how to write it. */
  | { command: "unschedule" | "timezone"; error: string };

const NAMES = new Set(["schedules", "unschedule", "timezone"]);

/** The schedule command in `text` (Telegram's `/timezone@MyBot` form too), or null when it is none of them. */
export function parseScheduleCommand(text: string): ScheduleCommand | null {
  const m = /^\/([a-z]+)(?:@[A-Za-z0-9_]+)?(?:\s+([\s\S]*))?$/i.exec(text.trim());
  const name = m?.[1]!.toLowerCase();
  if (!m || !name || !NAMES.has(name)) return null;
  const args = (m[2] ?? "").trim().split(/\s+/).filter(Boolean);
  switch (name) {
    case "schedules":
      return { command: "schedules" };
    case "unschedule": {
      if (args.length !== 1) return { command: "unschedule", error: "Write /unschedule and one job id, e.g. /unschedule sch_1a2b3c4d5e (/schedules lists yours)." };
      if (!JOB_ID.test(args[0]!)) return { command: "unschedule", error: `"${shown(args[0]!)}" is not a job id; /schedules lists yours.` };
      return { command: "unschedule", id: args[0]! };
    }
    default: {
      if (args.length === 0) return { command: "timezone", zone: null };
      if (args.length > 1) return { command: "timezone", error: "Write /timezone and one IANA time zone name, e.g. /timezone Europe/Berlin." };
      const checked = checkZone(args[0]!);
      if ("error" in checked) return { command: "timezone", error: `Time zone ${checked.error}.` };
      return { command: "timezone", zone: checked.zone };
    }
  }
}
