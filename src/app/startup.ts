// How the entry points (`npm start`, `npm run chat`) fail to start: a problem the admin can fix is one message and
// exit code 1, never a stack trace.

/** A problem that stops the gateway from starting, with a message for the admin. */
export class StartupError extends Error {
  override name = "StartupError";
}

/** For entry points: a StartupError is printed for the admin and the process exits 1. */
export async function startOrExit<T>(start: () => Promise<T>): Promise<T> {
  try {
    return await start();
  } catch (error) {
    if (!(error instanceof StartupError)) throw error;
    process.stderr.write(`${error.message}\n`);
    process.exit(1);
  }
}
