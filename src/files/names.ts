// File names come from users and platforms: anything may be in them. A sanitised name is safe to show, to log at
// debug level, to put in a Content-Disposition header and to join under a directory.

const MAX_NAME = 128;

/**
 * The last path segment of `raw`, without control or reserved characters, leading dots or trailing dots and spaces,
 * at most 128 characters with its extension kept; `fallback` when nothing is left.
 */
export function sanitizeFilename(raw: string | null | undefined, fallback = "file"): string {
  const base = (raw ?? "").normalize("NFC").split(/[\\/]/).pop() ?? "";
  let name = base
    // C0/C1 controls, bidi overrides (a name that reads backwards), and characters Windows and shells treat specially.
    .replace(/[\u0000-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069<>:"|?*]/g, "")
    .replace(/\s+/g, " ")
    .trim()
    .replace(/^\.+/, "")
    .replace(/[. ]+$/, "");
  if (/^(con|prn|aux|nul|com\d|lpt\d)(\..*)?$/i.test(name)) name = `_${name}`;
  if (name === "") return fallback;
  if (name.length <= MAX_NAME) return name;
  const dot = name.lastIndexOf(".");
  const ext = dot > 0 && name.length - dot <= 16 ? name.slice(dot) : "";
  return name.slice(0, MAX_NAME - ext.length) + ext;
}

/** `name` with the extension of its detected type when it has none (a Telegram photo has no name at all). */
export function withExtension(name: string, ext: string | undefined): string {
  if (!ext || /\.[A-Za-z0-9]{1,8}$/.test(name)) return name;
  return `${name}.${ext}`;
}

/** For a Content-Disposition header: the ASCII fallback and the RFC 5987 UTF-8 form. */
export function contentDisposition(kind: "inline" | "attachment", name: string): string {
  const ascii = name.replace(/[^\x20-\x7e]/g, "_").replace(/["\\]/g, "_");
  return `${kind}; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(name)}`;
}
