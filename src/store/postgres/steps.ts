// The journal of turns on PostgreSQL: every step one transaction in one round trip (commit.ts), its fence checked
// under a lock on the lease row, its feed changes heard here once it committed.
import * as rows from "../rows.js";
import type { Fence, FrameRecord, Lease, LogEntry, SessionWriter, StepCommit, StepStore } from "../store.js";
import { writeStep } from "./commit.js";
import type { PostgresContext } from "./context.js";
import { S } from "./statements.js";

export class PostgresSteps implements StepStore {
  constructor(private readonly ctx: PostgresContext) {}

  writer(lease: Lease): SessionWriter {
    const sessionKey = lease.key;
    const fence: Fence = { holder: lease.holder, token: lease.token };
    return { sessionKey, fence, commit: (step) => this.commit(sessionKey, fence, step) };
  }

  private async commit(key: string, fence: Fence, step: StepCommit): Promise<void> {
    // What was announced before this step (the reply's streamed pieces) reaches the others before the step does.
    await this.ctx.feed.settled();
    const now = this.ctx.now();
    // One round trip, its own transaction (writeStep).
    this.ctx.feed.committed(await writeStep(this.ctx.pool, key, fence, step, now));
  }

  async frames(sessionKey: string): Promise<FrameRecord[]> {
    return (await this.ctx.all(S.frames, [sessionKey])).map((r) => rows.toFrame(r, sessionKey));
  }

  async history(sessionKey: string, agentSessionId: string): Promise<LogEntry[]> {
    return (await this.ctx.all(S.history, [agentSessionId, sessionKey])).map(rows.toLogEntry);
  }

  async log(sessionKey: string): Promise<LogEntry[]> {
    return (await this.ctx.all(S.sessionLog, [sessionKey])).map(rows.toLogEntry);
  }

  async openAgentSessions(sessionKey: string): Promise<Array<{ agentSessionId: string; agentName: string }>> {
    return (await this.ctx.all(S.openAgentSessions, [sessionKey])).map((r) => rows.toOpenAgentSession(r, sessionKey));
  }
}
