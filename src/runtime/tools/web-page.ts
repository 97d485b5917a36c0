import { createRequire } from "node:module";
import type TurndownService from "turndown";

// A fetched page as the text WebFetch's reader sees: HTML converted to Markdown, other text kept, binary refused,
// and cut to a bound, saying so.

/** Media types read as text; HTML is converted, the others are kept as they are. */
const TEXT_TYPES = /^(text\/[\w.+-]+|application\/(json|xml|xhtml\+xml|rss\+xml|atom\+xml|ld\+json|javascript|x-ndjson|[\w.-]+\+(json|xml)))$/;

export type PageText = { ok: true; text: string; cut: boolean } | { ok: false; reason: string };

function converter(): TurndownService {
  // turndown (and the DOM it parses with) is loaded on the first HTML page, not at every start.
  const Turndown = createRequire(import.meta.url)("turndown") as typeof TurndownService;
  const service = new Turndown({ headingStyle: "atx", codeBlockStyle: "fenced", bulletListMarker: "-" });
  // Not content: scripts and styles would reach the reader as text, and hidden markup is a place to hide instructions.
  service.remove(["script", "style", "noscript", "template", "iframe", "object", "embed", "svg", "canvas"]);
  return service;
}

/** The page's body as Markdown (HTML) or as it is (other text), at most `maxChars` characters. */
export function pageText(body: string, contentType: string | undefined, maxChars: number): PageText {
  const type = (contentType ?? "").split(";")[0]!.trim().toLowerCase();
  if (type !== "" && !TEXT_TYPES.test(type)) return { ok: false, reason: `the page is ${type}, not text or HTML; WebFetch reads text pages only` };
  // No or a wrong type: a NUL byte, or many replacement characters from decoding, mark binary content.
  const sample = body.slice(0, 4096);
  if (sample.includes("\u0000") || (sample.match(/\uFFFD/g)?.length ?? 0) > sample.length / 10) {
    return { ok: false, reason: "the page is binary content, not text; WebFetch reads text pages only" };
  }
  const html = type === "text/html" || type === "application/xhtml+xml" || (type === "" && /^\s*(<!doctype html|<html)/i.test(sample));
  const text = (html ? converter().turndown(body) : body).trim();
  if (text.length <= maxChars) return { ok: true, text, cut: false };
  return { ok: true, text: text.slice(0, maxChars), cut: true };
}
