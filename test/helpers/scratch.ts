import { accessSync, constants, statSync } from "node:fs";
import { tmpdir } from "node:os";

/**
 * Where a test that writes many small SQLite files puts them: /dev/shm (memory) where there is one, else the system's
 * temporary folder. A SQLite store fsyncs at every checkpoint and close; on a busy disk that waiting was half the
 * simulation's time. The files are scratch either way and a SIGKILLed process leaves the page cache as it was, so
 * nothing the tests prove depends on the disk. Not for files a sandbox must see: bubblewrap gives it a /dev of its own.
 */
export function scratchRoot(): string {
  try {
    if (!statSync("/dev/shm").isDirectory()) return tmpdir();
    accessSync("/dev/shm", constants.W_OK);
    return "/dev/shm";
  } catch {
    return tmpdir();
  }
}
