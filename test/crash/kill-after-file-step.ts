// Preloaded into a gateway process by file-sigkill.test.ts (`node --import tsx --import <this>`): with
// KILL_AFTER_FILE_STEP=1 the process SIGKILLs itself right after the first step commit that stored a file an agent
// made (send_file), before anything heard of that commit, so the file's outbox entry is committed and not yet
// delivered. It says so on stderr first. Without the variable it changes nothing.
import type { StepCommit } from "../../src/store/store.js";
import { SqliteSteps } from "../../src/store/sqlite/steps.js";

if (process.env.KILL_AFTER_FILE_STEP === "1") {
  const steps = SqliteSteps.prototype as unknown as { announce(key: string, step: StepCommit): void };
  // oxlint-disable-next-line typescript/unbound-method -- kept to be called with the steps as `this`, below
  const announce = steps.announce;
  steps.announce = function (this: unknown, key: string, step: StepCommit) {
    if ((step.files?.length ?? 0) > 0) {
      process.stderr.write(`KILLED after the step that stored ${step.files!.length} file(s) committed\n`);
      process.kill(process.pid, "SIGKILL");
      for (;;); // the signal lands before anything else runs
    }
    announce.call(this, key, step);
  };
}
