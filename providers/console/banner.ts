/** What a row of the banner says: a surface and where it is, or a platform and how it is. */
export type BannerRow = [name: string, where: string];

export interface BannerOptions {
  /** End of input ends the chat (npm run chat) rather than only the chat's input (npm start). */
  exitOnEnd: boolean;
  /** Where the log goes, when not to the terminal. */
  logFile?: string | undefined;
  /** Everything else that is up (web chat, /admin, /metrics, …) and each chat platform's state. */
  surfaces?: BannerRow[] | undefined;
}

/**
 * What the chat is and how to leave it (Ctrl-D ends only the input, which stops a chat but not a service), then one
 * row per surface with its address, so the first screen shows everything a new user can open.
 */
export function banner(options: BannerOptions): string {
  const quit = options.exitOnEnd ? "Ctrl-C or Ctrl-D quits." : "Ctrl-C to quit (Ctrl-D closes only this chat; the service keeps running).";
  const rows: BannerRow[] = [...(options.surfaces ?? []), ...(options.logFile ? [["Logs", options.logFile] as BannerRow] : [])];
  const width = Math.max(0, ...rows.map(([name]) => name.length));
  return [
    `Switchboard terminal chat. /status shows the agent stack, /cancel stops it, /reset starts over. ${quit}`,
    ...rows.map(([name, where]) => `  ${name.padEnd(width)}  ${where}`),
  ].join("\n");
}
