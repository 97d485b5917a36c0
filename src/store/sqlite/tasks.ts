// Tasks on SQLite: read back through the quarantine (an unreadable structured output or metadata is set aside).
import { toTaskUsage, type Row } from "../rows.js";
import type { TaskRecord, TaskStore, Usage } from "../store.js";
import type { SqliteContext } from "./context.js";

export class SqliteTasks implements TaskStore {
  constructor(private readonly ctx: SqliteContext) {}

  async get(id: string): Promise<TaskRecord | null> {
    const row = this.ctx.stmts.taskById.get(id) as Row | undefined;
    return row ? this.ctx.quarantine.task(row) : null;
  }

  async ofSession(sessionKey: string): Promise<TaskRecord[]> {
    return (this.ctx.stmts.tasksOf.all(sessionKey) as Row[]).map((r) => this.ctx.quarantine.task(r));
  }

  async active(sessionKey: string): Promise<TaskRecord | null> {
    const row = this.ctx.stmts.activeTask.get(sessionKey) as Row | undefined;
    return row ? this.ctx.quarantine.task(row) : null;
  }

  async activeOf(keyPrefix: string, ownerId: string): Promise<TaskRecord | null> {
    const row = this.ctx.stmts.activeTaskOf.get(ownerId, keyPrefix, keyPrefix, keyPrefix) as Row | undefined;
    return row ? this.ctx.quarantine.task(row) : null;
  }

  async usage(taskId: string): Promise<Usage> {
    return toTaskUsage(this.ctx.stmts.taskUsage.get({ task: taskId }) as Row);
  }
}
