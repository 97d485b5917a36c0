// One HTTP exchange over a connection to an address that was already checked. The dispatcher's DNS lookup is
// replaced by one that can only answer the checked addresses, so nothing between the check and the connect can
// swap the destination (DNS rebinding); the URL keeps the host name, so Host and TLS SNI stay the original name.
import type { LookupAddress, LookupOptions } from "node:dns";
import type { Readable } from "node:stream";
import { Agent, request } from "undici";
import type { ResolvedAddress } from "./target.js";

export interface HopRequest {
  method: string;
  url: URL;
  headers: Record<string, string>;
  body: string | undefined;
  /** The checked addresses of `url`'s host; the connection goes to one of these and nowhere else. */
  addresses: ResolvedAddress[];
  signal: AbortSignal;
}

export interface HopResponse {
  status: number;
  headers: Record<string, string>;
  body: Readable;
  /** Frees the connection; call it once the body has been read or is no longer wanted. */
  close(): Promise<void>;
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** A `lookup` for net/tls.connect that answers `hostname` with the checked addresses only. */
export function pinnedLookup(hostname: string, addresses: readonly ResolvedAddress[]) {
  return (name: string, options: LookupOptions, callback: LookupCallback): void => {
    const wanted = addresses.filter((a) => !options.family || options.family === a.family);
    if (name.toLowerCase() !== hostname.toLowerCase() || wanted.length === 0) {
      const error: NodeJS.ErrnoException = new Error(`egress: no checked address for ${name}`);
      error.code = "ENOTFOUND";
      callback(error, "");
      return;
    }
    if (options.all)
      callback(
        null,
        wanted.map((a) => ({ address: a.address, family: a.family })),
      );
    else callback(null, wanted[0]!.address, wanted[0]!.family);
  };
}

function flatten(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const flat: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) flat[name] = Array.isArray(value) ? value.join(", ") : value;
  }
  return flat;
}

/** Sends one request (no redirect following) and returns once the response head has arrived. */
export async function openHop(hop: HopRequest): Promise<HopResponse> {
  // A fresh agent per hop: its connections are pinned to this hop's host and addresses, and pooling across
  // hops would let a later hop reuse a socket chosen for an earlier, differently checked host.
  const agent = new Agent({ connect: { lookup: pinnedLookup(hop.url.hostname, hop.addresses) } });
  try {
    const response = await request(hop.url, {
      method: hop.method as "GET",
      headers: hop.headers,
      body: hop.body,
      signal: hop.signal,
      dispatcher: agent,
    });
    const body = response.body;
    // A body destroyed by a timeout or by closing the agent must not surface as an unhandled stream error.
    body.on("error", () => {});
    return {
      status: response.statusCode,
      headers: flatten(response.headers),
      body,
      close: async () => {
        body.destroy();
        await agent.destroy();
      },
    };
  } catch (error) {
    await agent.destroy();
    throw error;
  }
}
