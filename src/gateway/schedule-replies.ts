// What /schedules, /unschedule and /timezone answer: the sender's own jobs in this chat only (in a group, nobody
// sees or cancels another member's jobs), and the sender's time zone.
import type { Store } from "../store/store.js";
import { jobsText } from "../schedules/describe.js";
import { listed, userZone } from "../runtime/tools/schedules.js";
import { parseScheduleCommand } from "./schedule-commands.js";

export interface ScheduleReplyDeps {
  store: Pick<Store, "schedules">;
  now: () => number;
  defaultZone?: string | undefined;
  /** SCHEDULES=off: the commands say so. */
  enabled: boolean;
}

/** The answer to a schedule command from `userId` in `sessionKey`. */
export async function scheduleCommandText(deps: ScheduleReplyDeps, userId: string, sessionKey: string, text: string): Promise<string> {
  if (!deps.enabled) return "Scheduled jobs are switched off on this server (SCHEDULES=off).";
  const command = parseScheduleCommand(text);
  if (!command) return "Unknown schedule command.";
  if ("error" in command) return command.error;
  const zones = { store: () => deps.store, defaultZone: deps.defaultZone };
  switch (command.command) {
    case "schedules": {
      const jobs = (await deps.store.schedules.list(userId, sessionKey)).filter((j) => j.status !== "done");
      return jobsText(jobs.map(listed), await userZone(zones, userId), deps.now());
    }
    case "unschedule":
      return (await deps.store.schedules.cancel(command.id, userId))
        ? `Cancelled job ${command.id}; it will not run again.`
        : `You have no job ${command.id}; /schedules lists yours.`;
    case "timezone": {
      if (command.zone === null) {
        const own = await deps.store.schedules.timezone(userId);
        const zone = await userZone(zones, userId);
        return own
          ? `Your time zone is ${zone}. Change it with /timezone <IANA name>, e.g. /timezone Europe/Berlin.`
          : `Your time zone is ${zone} (the server's default). Set yours with /timezone <IANA name>, e.g. /timezone Europe/Berlin.`;
      }
      await deps.store.schedules.setTimezone(userId, command.zone);
      return `Your time zone is now ${command.zone}. New jobs you schedule and the times I show you use it; jobs already scheduled keep theirs.`;
    }
  }
}
