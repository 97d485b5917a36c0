// The HTTP routes as a table: each route is a method, a path pattern, who may call it and its handler, in the style
// of Hono's router. A pattern's `:name` segment matches one non-empty path segment (as sent, not percent-decoded)
// and a trailing `/*` matches the path itself and everything under it. Routes are tried in order.

/** Who may call a route: anyone (the probes, the page), a user with an API token, or an operator (/admin). */
export type RouteAuth = "none" | "user" | "admin";

export interface Route<H> {
  /** An HTTP method, or "*" for any. */
  method: string;
  path: string;
  auth: RouteAuth;
  handler: H;
}

export type RouteMatch<H> = { kind: "found"; route: Route<H>; params: Record<string, string> } | { kind: "none" };

interface Compiled<H> {
  route: Route<H>;
  pattern: RegExp;
  names: string[];
}

export class Router<H> {
  private readonly routes: Compiled<H>[];

  constructor(routes: readonly Route<H>[]) {
    this.routes = routes.map((route) => compile(route));
  }

  /** The route for `method path`; a known path with another method is as unknown as a made-up one. */
  match(method: string | undefined, path: string): RouteMatch<H> {
    for (const { route, pattern, names } of this.routes) {
      const m = pattern.exec(path);
      if (!m) continue;
      if (route.method === "*" || route.method === method) {
        return { kind: "found", route, params: Object.fromEntries(names.map((name, i) => [name, m[i + 1]!])) };
      }
    }
    return { kind: "none" };
  }
}

function compile<H>(route: Route<H>): Compiled<H> {
  const names: string[] = [];
  const under = route.path.endsWith("/*");
  const base = under ? route.path.slice(0, -2) : route.path;
  const source = base
    .split("/")
    .map((segment) => {
      if (!segment.startsWith(":")) return segment.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
      names.push(segment.slice(1));
      return "([^/]+)";
    })
    .join("/");
  return { route, names, pattern: new RegExp(`^${source}${under ? "(?:/.*)?" : ""}$`) };
}
