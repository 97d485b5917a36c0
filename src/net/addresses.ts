// Which IP addresses the model may reach. We use ipaddr.js rather than net.BlockList because a refusal has to
// say *which* range an address is in (BlockList only answers yes/no) and because IPv6 forms that carry an IPv4
// address (mapped, NAT64, 6to4) must be judged by that IPv4 address, which needs the parsed parts. ipaddr.js is
// small, dependency-free and the parser Express trusts for the same job.
import { isIP } from "node:net";
import ipaddr from "ipaddr.js";

export type IpAddress = ipaddr.IPv4 | ipaddr.IPv6;

type Range = readonly [cidr: string, reason: string];

const V4_RANGES: readonly Range[] = [
  ["0.0.0.0/8", 'an unspecified ("this network") address'],
  ["10.0.0.0/8", "a private address"],
  ["100.64.0.0/10", "a carrier-grade NAT (shared) address"],
  ["127.0.0.0/8", "a loopback address"],
  ["169.254.0.0/16", "a link-local address"],
  ["172.16.0.0/12", "a private address"],
  ["192.0.0.0/24", "a reserved (IETF protocol assignment) address"],
  ["192.0.2.0/24", "a documentation address"],
  ["192.88.99.0/24", "a reserved (6to4 relay) address"],
  ["192.168.0.0/16", "a private address"],
  ["198.18.0.0/15", "a benchmarking address"],
  ["198.51.100.0/24", "a documentation address"],
  ["203.0.113.0/24", "a documentation address"],
  ["224.0.0.0/4", "a multicast address"],
  ["255.255.255.255/32", "the broadcast address"],
  ["240.0.0.0/4", "a reserved address"],
];

const V6_RANGES: readonly Range[] = [
  ["::/128", "the unspecified address"],
  ["::1/128", "a loopback address"],
  ["::/96", "a reserved (IPv4-compatible) address"],
  ["64:ff9b:1::/48", "a local-use NAT64 address"],
  ["100::/64", "a discard-only address"],
  ["2001::/32", "a Teredo tunnel address"],
  ["2001:2::/48", "a benchmarking address"],
  ["2001:db8::/32", "a documentation address"],
  ["3fff::/20", "a documentation address"],
  ["fc00::/7", "a unique local (private) address"],
  ["fe80::/10", "a link-local address"],
  ["fec0::/10", "a site-local address"],
  ["ff00::/8", "a multicast address"],
];

// Anything outside the global unicast block is unassigned or special-purpose; refusing it beats listing it.
const V6_GLOBAL_UNICAST = ipaddr.IPv6.parseCIDR("2000::/3");

const parsedV4 = V4_RANGES.map(([cidr, reason]) => [ipaddr.IPv4.parseCIDR(cidr), reason] as const);
const parsedV6 = V6_RANGES.map(([cidr, reason]) => [ipaddr.IPv6.parseCIDR(cidr), reason] as const);

const EMBEDDING: ReadonlyArray<readonly [range: [ipaddr.IPv6, number], name: string, firstPart: number]> = [
  [ipaddr.IPv6.parseCIDR("::ffff:0:0/96"), "an IPv4-mapped address", 6],
  [ipaddr.IPv6.parseCIDR("::ffff:0:0:0/96"), "an IPv4-translated address", 6],
  [ipaddr.IPv6.parseCIDR("64:ff9b::/96"), "a NAT64 address", 6],
  [ipaddr.IPv6.parseCIDR("2002::/16"), "a 6to4 address", 1],
];

/**
 * An address in canonical textual form (what the URL parser or a resolver gives), brackets and zone allowed.
 * Returns null for anything else: shorthand IPv4 forms must have been normalised by the URL parser first.
 */
export function parseAddress(text: string): IpAddress | null {
  const bare = text.startsWith("[") && text.endsWith("]") ? text.slice(1, -1) : text;
  return isIP(bare.split("%")[0]!) === 0 ? null : ipaddr.parse(bare);
}

/** The IPv4 address an IPv6 address stands for (mapped, translated, NAT64, 6to4), or null. */
export function embeddedIPv4(address: ipaddr.IPv6): { v4: ipaddr.IPv4; name: string } | null {
  for (const [range, name, firstPart] of EMBEDDING) {
    if (!address.match(range)) continue;
    const p = address.parts;
    const hi = p[firstPart]!;
    const lo = p[firstPart + 1]!;
    return { v4: new ipaddr.IPv4([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff]), name };
  }
  return null;
}

/** Why the model may not reach `address` ("a loopback address", …), or null when it is an ordinary public address. */
export function blockedReason(address: IpAddress): string | null {
  if (address.kind() === "ipv4") {
    const v4 = address as ipaddr.IPv4;
    return parsedV4.find(([range]) => v4.match(range))?.[1] ?? null;
  }
  const v6 = address as ipaddr.IPv6;
  const embedded = embeddedIPv4(v6);
  if (embedded) {
    const inner = blockedReason(embedded.v4);
    return inner === null ? null : `${embedded.name} of ${embedded.v4.toString()}, ${inner}`;
  }
  const listed = parsedV6.find(([range]) => v6.match(range));
  if (listed) return listed[1];
  return v6.match(V6_GLOBAL_UNICAST) ? null : "a reserved address (outside the global unicast range 2000::/3)";
}
