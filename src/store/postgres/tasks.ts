// Tasks on PostgreSQL: read back through the quarantine (an unreadable structured output or metadata is set aside).
import * as rows from "../rows.js";
import type { TaskRecord, TaskStore, Usage } from "../store.js";
import type { PostgresContext } from "./context.js";
import { S } from "./statements.js";

export class PostgresTasks implements TaskStore {
  constructor(private readonly ctx: PostgresContext) {}

  async get(id: string): Promise<TaskRecord | null> {
    return this.ctx.maybe(S.taskById, [id], (row) => this.ctx.quarantine.task(row));
  }

  async ofSession(sessionKey: string): Promise<TaskRecord[]> {
    return Promise.all((await this.ctx.all(S.tasksOf, [sessionKey])).map((r) => this.ctx.quarantine.task(r)));
  }

  async active(sessionKey: string): Promise<TaskRecord | null> {
    return this.ctx.maybe(S.activeTask, [sessionKey], (row) => this.ctx.quarantine.task(row));
  }

  async activeOf(keyPrefix: string, ownerId: string): Promise<TaskRecord | null> {
    return this.ctx.maybe(S.activeTaskOf, [ownerId, keyPrefix], (row) => this.ctx.quarantine.task(row));
  }

  async usage(taskId: string): Promise<Usage> {
    return rows.toTaskUsage((await this.ctx.one(S.taskUsage, [taskId]))!);
  }
}
