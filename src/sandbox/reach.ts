// When the gateway runs as root, bubblewrap runs as the sandbox's unprivileged user, and it looks up the folders
// it mounts by path as that user: every folder above a workspace or a skill's folder must let that user through
// (x), and the folder itself be readable. Checked before starting, so the admin reads which folder and what to run
// instead of bubblewrap's "Can't find source path … Permission denied".
import { stat } from "node:fs/promises";
import { dirname } from "node:path";
import type { SandboxUser } from "./types.js";

function allows(info: { uid: number; gid: number; mode: number }, user: SandboxUser, bits: { owner: number; group: number; other: number }): boolean {
  if (info.uid === user.uid) return (info.mode & bits.owner) === bits.owner;
  if (info.gid === user.gid) return (info.mode & bits.group) === bits.group;
  return (info.mode & bits.other) === bits.other;
}

const SEARCH = { owner: 0o100, group: 0o010, other: 0o001 };
const READ_SEARCH = { owner: 0o500, group: 0o050, other: 0o005 };

/** Why `user` cannot reach and read the folder `dir`, with the fix, or null. */
export async function unreachable(dir: string, user: SandboxUser): Promise<string | null> {
  const own = await stat(dir);
  if (!allows(own, user, READ_SEARCH)) {
    return `the sandbox user (uid ${user.uid}) cannot read ${dir} (mode ${(own.mode & 0o777).toString(8)}); make it readable (chmod o+rx ${dir})`;
  }
  for (let at = dirname(dir); ; at = dirname(at)) {
    const info = await stat(at);
    if (!allows(info, user, SEARCH)) {
      return (
        `the sandbox user (uid ${user.uid}) cannot reach ${dir}: ${at} (mode ${(info.mode & 0o777).toString(8)}) does not let it ` +
        `through; run chmod o+x ${at}, keep DATA_DIR and the skills elsewhere, or run the gateway as an unprivileged user`
      );
    }
    if (at === dirname(at)) return null;
  }
}
