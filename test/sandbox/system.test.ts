// What a sandbox shows of the machine, worked out once at start: /usr and the /bin, /lib links read-only, a short
// list of /etc entries, and covers for paths to keep hidden that a shown folder would expose.
import { realpathSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { masksFor, mountArgs, systemView } from "../../src/sandbox/system.js";

describe("the system a sandbox sees", () => {
  it("binds /usr and /etc's needed entries read-only, and nothing of /home, /root, /var or /srv", () => {
    const view = systemView();
    expect(view.ops[0]).toEqual({ op: "ro-bind", source: "/usr", dest: "/usr" });
    const dests = view.ops.map((o) => o.dest);
    for (const etc of dests.filter((d) => d.startsWith("/etc/"))) expect(etc).not.toMatch(/shadow|ssh|sudoers|cron|environment/);
    for (const host of ["/home", "/root", "/var", "/srv", "/opt", "/mnt"]) expect(dests.some((d) => d === host || d.startsWith(`${host}/`))).toBe(false);
  });

  it("covers a hidden folder or file that lies inside a shown folder, at its place inside", () => {
    const view = systemView();
    const shell = realpathSync("/bin/bash");
    expect(masksFor(["/usr/share", "/bin/bash", "/does/not/exist", "/home"], view.sources)).toEqual([
      { op: "mask-dir", dest: "/usr/share" },
      { op: "mask-file", dest: shell },
    ]);
    expect(
      mountArgs([
        { op: "mask-dir", dest: "/usr/share" },
        { op: "mask-file", dest: "/usr/bin/x" },
      ]),
    ).toEqual(["--tmpfs", "/usr/share", "--remount-ro", "/usr/share", "--ro-bind", "/dev/null", "/usr/bin/x"]);
  });
});
