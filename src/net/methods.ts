// What a request asks the server to do. Many frameworks honour a method-override header on a GET or POST, so
// the header is as much "the method" as the method itself: approval and redirect rules must look at both.

export const METHOD_OVERRIDE_HEADERS: readonly string[] = ["x-http-method-override", "x-http-method", "x-method-override"];

const READS = new Set(["GET", "HEAD"]);

/** The request's own method (GET when absent, as the tool's schema defaults) plus every override header's value. */
export function requestedMethods(method: unknown, headers: unknown): string[] {
  const methods = [typeof method === "string" && method.trim() !== "" ? method.trim().toUpperCase() : "GET"];
  if (headers && typeof headers === "object" && !Array.isArray(headers)) {
    for (const [name, value] of Object.entries(headers)) {
      if (!METHOD_OVERRIDE_HEADERS.includes(name.toLowerCase())) continue;
      const override = String(value).trim().toUpperCase();
      // An empty or odd value still counts: we cannot know what the server makes of it.
      methods.push(override === "" ? "(empty override)" : override);
    }
  }
  return methods;
}

/** True unless every method the request names is a read (GET/HEAD); unknown methods count as writes. */
export function isWrite(method: unknown, headers: unknown): boolean {
  return requestedMethods(method, headers).some((m) => !READS.has(m));
}

export const REDIRECT_STATUSES: ReadonlySet<number> = new Set([301, 302, 303, 307, 308]);

/** The method for the next hop, as fetch rewrites it: 303 → GET (HEAD stays), 301/302 turn only POST into GET. */
export function redirectedMethod(status: number, method: string): { method: string; keepBody: boolean } {
  if ((status === 303 && method !== "GET" && method !== "HEAD") || ((status === 301 || status === 302) && method === "POST")) {
    return { method: "GET", keepBody: false };
  }
  return { method, keepBody: true };
}
