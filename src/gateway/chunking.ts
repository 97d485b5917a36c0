/**
 * Where to cut `text` so the part from `start` stays within `limit` UTF-16 units: after the last
 * paragraph break, else line break, else space in the second half of the window (so parts are not
 * tiny), else at the limit; never between the two halves of a surrogate pair. Returns an index > start.
 */
export function cutPosition(text: string, start: number, limit: number): number {
  const window = text.slice(start, start + limit);
  let cut = -1;
  for (const separator of ["\n\n", "\n", " "]) {
    const at = window.lastIndexOf(separator);
    if (at >= window.length / 2) {
      cut = at + separator.length;
      break;
    }
  }
  if (cut <= 0) cut = limit;
  const code = text.charCodeAt(start + cut - 1);
  if (code >= 0xd800 && code <= 0xdbff) cut -= 1;
  return start + cut;
}
