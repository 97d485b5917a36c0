const graphemes = new Intl.Segmenter(undefined, { granularity: "grapheme" });

/**
 * Where to cut `text` so the part from `start` stays within `limit` UTF-16 units: after the last
 * paragraph break, else line break, else space in the second half of the window (so parts are not
 * tiny), else at the limit; always at a grapheme cluster boundary, so a ZWJ emoji family, a flag or
 * a skin-tone modifier is never split between two messages. Returns an index > start.
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
  return start + graphemeBoundary(text, start, cut);
}

/**
 * The last grapheme boundary at or before `cut` (counted from `start`), above 0. Whether a position is a
 * boundary depends on the text before it and the one code point after it, so segmenting up to two units past
 * `cut` is enough. A single cluster longer than `cut` (pathological stacks of combining marks) is cut anyway,
 * but never between the two halves of a surrogate pair.
 */
function graphemeBoundary(text: string, start: number, cut: number): number {
  if (start + cut >= text.length) return text.length - start;
  let best = 0;
  for (const { index } of graphemes.segment(text.slice(start, start + cut + 2))) {
    if (index > cut) break;
    best = index;
  }
  if (best > 0) return best;
  const code = text.charCodeAt(start + cut - 1);
  return code >= 0xd800 && code <= 0xdbff && cut > 1 ? cut - 1 : cut;
}
