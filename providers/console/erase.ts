/**
 * What takes back `shown` (text written from the start of a line, wrapped at `columns`) on a terminal: the cursor
 * goes up to the line it began on, and everything from there down is cleared. Wide characters count as one column,
 * so a line of CJK text may leave its first row behind (harmless: the text that follows overwrites it).
 */
export function eraseWritten(shown: string, columns: number): string {
  const width = Math.max(1, columns);
  const rows = shown.split("\n").reduce((sum, line) => sum + Math.max(1, Math.ceil([...line].length / width)), 0);
  return `${rows > 1 ? `\x1b[${rows - 1}F` : "\r"}\x1b[J`;
}
