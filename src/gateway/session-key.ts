/** One part of a session key: `[A-Za-z0-9_.-]`, at most 64 characters; anything else becomes `_`. */
export function keyPart(value: string | number): string {
  const cleaned = String(value)
    .replace(/[^A-Za-z0-9_.-]/g, "_")
    .slice(0, 64);
  return cleaned === "" ? "_" : cleaned;
}

/** `sessionKey("telegram", 123, "topic", 7)` → `telegram:123:topic:7` */
export function sessionKey(provider: string, ...parts: (string | number)[]): string {
  return [keyPart(provider), ...parts.map(keyPart)].join(":");
}

export function providerOf(sessionKey: string): string {
  const colon = sessionKey.indexOf(":");
  return colon < 0 ? sessionKey : sessionKey.slice(0, colon);
}
