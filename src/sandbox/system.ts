// What a sandbox shows of this machine, read-only: the programs and libraries (/usr and the /bin, /lib links or
// folders), and only the parts of /etc that programs need to run (the loader cache, certificates, time zones,
// MIME types, Python's site config). Nothing else of the host exists inside: no /home, /root, /var, /srv, /opt,
// /mnt, no DATA_DIR, no project folder. A path to keep hidden that lies inside one of these (a gateway installed
// under /usr/local, say) is covered by an empty folder or file.
import { lstatSync, readdirSync, readlinkSync, realpathSync } from "node:fs";
import { join, relative, sep } from "node:path";

/** One bubblewrap operation, in order. */
export type MountOp =
  | { op: "ro-bind"; source: string; dest: string }
  | { op: "symlink"; target: string; dest: string }
  | { op: "mask-dir"; dest: string }
  | { op: "mask-file"; dest: string };

const TOP_LEVEL_LINKS = ["bin", "sbin", "lib", "lib32", "lib64", "libx32"];

/** /etc entries programs need; everything else there (shadow, ssh keys, service configs) stays out. */
const ETC_ENTRIES = [
  "alternatives",
  "ca-certificates",
  "ca-certificates.conf",
  "crypto-policies",
  "debian_version",
  "fonts",
  "gai.conf",
  "host.conf",
  "ld.so.cache",
  "ld.so.conf",
  "ld.so.conf.d",
  "locale.alias",
  "locale.conf",
  "localtime",
  "magic",
  "magic.mime",
  "mime.types",
  "nsswitch.conf",
  "os-release",
  "pki",
  "protocols",
  "services",
  "ssl",
  "timezone",
  "xdg",
];
/** /etc folders of language runtimes (python3.11, ImageMagick-6, perl, R, java-17-openjdk): their own config. */
const ETC_RUNTIMES = /^(python\d[\d.]*|ImageMagick(-\d+)?|perl|R|java(-[\w.-]+)?)$/;

export interface SystemView {
  ops: MountOp[];
  /** Host folders shown inside (for the hidden-path check). */
  sources: Array<{ source: string; dest: string }>;
}

const kind = (path: string): "dir" | "file" | "link" | null => {
  try {
    const info = lstatSync(path);
    return info.isSymbolicLink() ? "link" : info.isDirectory() ? "dir" : "file";
  } catch {
    return null;
  }
};

/** The system folders of this machine as a sandbox shows them (read once at start). */
export function systemView(root = "/"): SystemView {
  const ops: MountOp[] = [];
  const sources: SystemView["sources"] = [];
  const bind = (source: string, dest: string) => {
    ops.push({ op: "ro-bind", source, dest });
    sources.push({ source: safeRealpath(source), dest });
  };
  bind(join(root, "usr"), "/usr");
  for (const name of TOP_LEVEL_LINKS) {
    const path = join(root, name);
    const k = kind(path);
    if (k === "link") ops.push({ op: "symlink", target: readlinkSync(path), dest: `/${name}` });
    else if (k === "dir") bind(path, `/${name}`);
  }
  const etc = join(root, "etc");
  let names: string[] = [];
  try {
    names = readdirSync(etc);
  } catch {
    // No /etc: programs run without it.
  }
  for (const name of names.sort()) {
    if (!ETC_ENTRIES.includes(name) && !ETC_RUNTIMES.test(name)) continue;
    if (kind(join(etc, name)) === null) continue;
    // A symlink is bound as what it points to (os-release → ../usr/lib/os-release), so it cannot dangle inside.
    try {
      realpathSync(join(etc, name));
    } catch {
      continue; // dangling on the host too
    }
    bind(join(etc, name), `/etc/${name}`);
  }
  return { ops, sources };
}

function safeRealpath(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

/**
 * Covers for `hidden` paths that a shown folder would expose: each hidden path under a shown source gets an
 * empty folder (or file) over it at the matching place inside. A shown folder that lies inside a hidden one
 * (a skill's folder inside the project) stays shown: it was chosen on purpose.
 */
export function masksFor(hidden: readonly string[], shown: ReadonlyArray<{ source: string; dest: string }>): MountOp[] {
  const ops: MountOp[] = [];
  for (const path of hidden) {
    let real: string;
    let isDir: boolean;
    try {
      real = realpathSync(path);
      isDir = lstatSync(real).isDirectory();
    } catch {
      continue; // not there: nothing to show
    }
    for (const { source, dest } of shown) {
      if (real !== source && !real.startsWith(source.endsWith(sep) ? source : source + sep)) continue;
      const inside = join(dest, relative(source, real));
      ops.push(isDir ? { op: "mask-dir", dest: inside } : { op: "mask-file", dest: inside });
    }
  }
  return ops;
}

/** bubblewrap arguments for `ops`. */
export function mountArgs(ops: readonly MountOp[]): string[] {
  return ops.flatMap((o) => {
    switch (o.op) {
      case "ro-bind":
        return ["--ro-bind", o.source, o.dest];
      case "symlink":
        return ["--symlink", o.target, o.dest];
      case "mask-dir":
        return ["--tmpfs", o.dest, "--remount-ro", o.dest];
      case "mask-file":
        return ["--ro-bind", "/dev/null", o.dest];
      default: {
        const never: never = o;
        throw new Error(`unknown mount op ${JSON.stringify(never)}`);
      }
    }
  });
}
