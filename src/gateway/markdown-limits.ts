// The model's replies are Markdown that providers turn into their platform's formatting with marked, on the event
// loop. Their text is the model's, and so anyone's who can put words in front of it (a page it read, a message it
// summarised). marked's cost grows faster than the text with nesting: 128 levels of "> - " on one line took 3.7 s,
// 2000 nested list items six minutes and then a stack overflow, 64 KB of 16-deep lists 3 s. Past these limits a
// reply is sent as plain text: every word arrives, only the formatting is lost.

/** Characters of Markdown a provider formats; a longer reply is sent as plain text. */
export const MAX_FORMATTED_CHARS = 16 * 1024;
/** Block quotes and list levels opened on one line, or list levels by indentation (two spaces each). */
export const MAX_MARKDOWN_NESTING = 8;

/** True when `markdown` is short and flat enough to format at a cost close to its length. */
export function formattable(markdown: string): boolean {
  if (markdown.length > MAX_FORMATTED_CHARS) return false;
  let fence: string | null = null;
  for (const line of markdown.split("\n")) {
    // Inside a fenced code block, indentation is code, not nesting.
    const marker = /^ {0,3}(`{3,}|~{3,})/.exec(line)?.[1];
    if (marker && (fence === null || marker.startsWith(fence))) {
      fence = fence === null ? marker : null;
      continue;
    }
    if (fence === null && nesting(line) > MAX_MARKDOWN_NESTING) return false;
  }
  return true;
}

/** How many containers a line opens or sits in: each ">" or list marker at its start, and its indentation / 2. */
function nesting(line: string): number {
  let depth = 0;
  let indent = 0;
  let i = 0;
  for (;;) {
    while (line[i] === " " || line[i] === "\t") i++;
    if (depth === 0) indent = i;
    if (line[i] === ">") {
      depth++;
      i++;
      continue;
    }
    const list = /^(?:[-*+]|\d{1,9}[.)])(?:[ \t]|$)/.exec(line.slice(i, i + 11));
    if (!list) break;
    depth++;
    i += list[0].length;
  }
  return depth + Math.floor(indent / 2);
}
