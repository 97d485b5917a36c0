import { migrateDatabase } from "../store/postgres/migrations.js";

// `npm run migrate`: brings the PostgreSQL database at DATABASE_URL up to this Switchboard's schema (what the
// gateway also does when it starts; this lets a deploy migrate first). One line out, exit 0; one line why, exit 1.
const url = process.env.DATABASE_URL?.trim();
if (!url) {
  process.stderr.write("DATABASE_URL is not set: set it to postgres://user:password@host:5432/database to migrate that database\n");
  process.exit(1);
}
try {
  const version = await migrateDatabase(url);
  process.stdout.write(`database at schema version ${version}\n`);
  process.exit(0);
} catch (error) {
  const message = error instanceof Error ? error.message : String(error);
  process.stderr.write(`migrate: ${message.replace(/\s*\n\s*/g, " ")}\n`);
  process.exit(1);
}
