// HTTP_REQUEST_ALLOW: the admin's exceptions to the private-address refusal. Parsing is strict because a
// typo here silently widens or narrows what the model can reach inside the network.
import { isIP } from "node:net";
import { domainToASCII } from "node:url";
import ipaddr from "ipaddr.js";
import { embeddedIPv4, type IpAddress } from "./addresses.js";

export interface Allowlist {
  /** The entries as written, for logs and messages. */
  readonly entries: readonly string[];
  /** Exact host names (lower case, no trailing dot). */
  readonly hosts: readonly string[];
  /** From `*.corp.example`: ".corp.example"; matches names below it, not the name itself. */
  readonly suffixes: readonly string[];
  readonly ranges: ReadonlyArray<readonly [IpAddress, number]>;
}

export const EMPTY_ALLOWLIST: Allowlist = { entries: [], hosts: [], suffixes: [], ranges: [] };

const LABEL = /^(?!-)[a-z0-9_-]{1,63}(?<!-)$/;

/** A host name as the URL parser would leave it (lower case, punycode, no trailing dot), or null. */
function hostName(text: string): string | null {
  const ascii = domainToASCII(text.replace(/\.$/, ""));
  if (ascii === "" || ascii.length > 253) return null;
  const labels = ascii.split(".");
  if (!labels.every((l) => LABEL.test(l))) return null;
  // The URL parser turns a name ending in a number (127.1, 10.0.0.010) into an IPv4 address.
  if (/^(\d+|0x[0-9a-f]*)$/.test(labels[labels.length - 1]!)) return null;
  return ascii;
}

function address(text: string): IpAddress | null {
  const bare = text.startsWith("[") && text.endsWith("]") ? text.slice(1, -1) : text;
  return isIP(bare) === 0 ? null : ipaddr.parse(bare);
}

function range(text: string): readonly [IpAddress, number] | null {
  const slash = text.lastIndexOf("/");
  const base = address(text.slice(0, slash));
  const bits = text.slice(slash + 1);
  if (!base || !/^\d{1,3}$/.test(bits)) return null;
  const prefix = Number(bits);
  return prefix <= (base.kind() === "ipv4" ? 32 : 128) ? [base, prefix] : null;
}

/**
 * Parses a comma-separated list of host names, `*.domain` wildcards, IP addresses and CIDR ranges.
 * An entry that is none of these is an error naming it: guessing what the admin meant is not safe here.
 */
export function parseAllowlist(text: string | undefined): { allow: Allowlist } | { error: string } {
  const entries = (text ?? "")
    .split(",")
    .map((e) => e.trim())
    .filter(Boolean);
  const hosts: string[] = [];
  const suffixes: string[] = [];
  const ranges: Array<readonly [IpAddress, number]> = [];
  for (const entry of entries) {
    const lower = entry.toLowerCase();
    if (lower.includes("/")) {
      const r = range(lower);
      if (!r) return { error: `"${entry}" is not a CIDR range: write an address and a prefix length, e.g. 10.0.0.0/8 or fd00::/8` };
      ranges.push(r);
      continue;
    }
    const single = address(lower);
    if (single) {
      ranges.push([single, single.kind() === "ipv4" ? 32 : 128]);
      continue;
    }
    const wildcard = lower.startsWith("*.");
    const name = hostName(wildcard ? lower.slice(2) : lower);
    if (!name) {
      return {
        error: `"${entry}" is not a host name, *.domain wildcard, IP address (written in full, e.g. 10.0.0.5) or CIDR range`,
      };
    }
    (wildcard ? suffixes : hosts).push(wildcard ? `.${name}` : name);
  }
  return { allow: { entries, hosts, suffixes, ranges } };
}

/** Whether a host-name entry covers `hostname` (as the URL parser gives it). */
export function allowsHost(allow: Allowlist, hostname: string): boolean {
  const name = hostname.toLowerCase().replace(/\.$/, "");
  return allow.hosts.includes(name) || allow.suffixes.some((s) => name.endsWith(s));
}

/** Whether an IP or CIDR entry covers `address`; an IPv6 form carrying an IPv4 address counts as that address. */
export function allowsAddress(allow: Allowlist, address: IpAddress): boolean {
  const forms: IpAddress[] = [address];
  if (address.kind() === "ipv6") {
    const inner = embeddedIPv4(address as ipaddr.IPv6);
    if (inner) forms.push(inner.v4);
  }
  return allow.ranges.some(([base, prefix]) => forms.some((f) => f.kind() === base.kind() && f.match(base, prefix)));
}
