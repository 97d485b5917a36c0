// Preloaded into a gateway process by group-commit-sigkill.test.ts (`node --import tsx --import <this>`): the
// process SIGKILLs itself right after the first group commit that stored at least KILL_AT_INBOUND_GROUP inbound
// messages, before any writer of that group was told it committed (so no HTTP client got its answer). It says
// what the group held on stderr first. Without the variable it changes nothing.
import { GroupCommit } from "../../src/store/sqlite/group-commit.js";
import { SqliteRequests } from "../../src/store/sqlite/requests.js";

const wanted = Number(process.env.KILL_AT_INBOUND_GROUP ?? 0);
if (wanted > 0) {
  let inbound = 0;
  // oxlint-disable-next-line typescript/unbound-method -- kept to be called with the store as `this`, below
  const insert = SqliteRequests.prototype.insert;
  SqliteRequests.prototype.insert = function (this: SqliteRequests, ...args: Parameters<SqliteRequests["insert"]>) {
    inbound++;
    return insert.apply(this, args);
  };
  // oxlint-disable-next-line typescript/unbound-method -- kept to be called with the group commit as `this`
  const flush = GroupCommit.prototype.flush;
  GroupCommit.prototype.flush = function (this: GroupCommit) {
    const held = inbound;
    inbound = 0;
    const self = this as unknown as { hooks: { before?: (n: number) => void; after?: (n: number) => void } };
    const hooks = self.hooks;
    if (held >= wanted) {
      self.hooks = {
        ...hooks,
        after: (writes) => {
          process.stderr.write(`KILLED after a group commit of ${writes} writes holding ${held} inbound messages\n`);
          process.kill(process.pid, "SIGKILL");
          for (;;); // the signal lands before anything else runs
        },
      };
    }
    try {
      flush.call(this);
    } finally {
      self.hooks = hooks;
    }
  };
}
