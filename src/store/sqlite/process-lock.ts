import Database from "better-sqlite3";

/**
 * One process per database file. SQLite's own file locks (POSIX fcntl locks, which the OS drops when the
 * process dies, even by SIGKILL) on a small sibling file: an exclusive transaction is held open on it for as
 * long as the store is open, and a second process's attempt fails at once. The database itself stays readable
 * by tools such as `npm run export`.
 */
export class ProcessLock {
  private readonly db: Database.Database;

  constructor(readonly file: string) {
    this.db = new Database(file);
    try {
      this.db.pragma("busy_timeout = 0");
      this.db.pragma("locking_mode = EXCLUSIVE");
      this.db.exec("BEGIN EXCLUSIVE");
    } catch (error) {
      this.db.close();
      if ((error as { code?: string }).code === "SQLITE_BUSY") throw new DatabaseInUseError(file);
      throw error;
    }
  }

  release(): void {
    if (!this.db.open) return;
    this.db.exec("ROLLBACK");
    this.db.close();
  }
}

/** Another process holds the database: the gateway refuses to start rather than share it. */
export class DatabaseInUseError extends Error {
  override name = "DatabaseInUseError";
  constructor(readonly lockFile: string) {
    super(`another process is using this database (${lockFile.replace(/\.lock$/, "")} is locked)`);
  }
}
