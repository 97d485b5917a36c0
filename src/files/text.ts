// Text-like files (txt, md, csv, json, source code) reach the model as text document blocks with the file name as
// title. A long one is cut, saying so, so that one file cannot fill the context window.

/** About 50,000 tokens. */
export const MODEL_TEXT_CHARS = 200_000;

export function fileText(bytes: Uint8Array): { text: string; truncated: boolean } {
  let text = new TextDecoder("utf-8").decode(bytes);
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  if (text.length <= MODEL_TEXT_CHARS) return { text, truncated: false };
  return { text: text.slice(0, MODEL_TEXT_CHARS), truncated: true };
}
