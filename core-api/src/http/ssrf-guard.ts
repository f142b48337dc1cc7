import { lookup as dnsLookup } from 'node:dns/promises';
import http from 'node:http';
import https from 'node:https';
import { BlockList, isIP, type LookupFunction } from 'node:net';

/**
 * Outbound-request guard (ARCHITECTURE §7: every outbound URL passes an SSRF guard). A target's hostname is
 * resolved once, every address is vetted, and the connection is pinned to the vetted address through the
 * socket's `lookup`, so a DNS answer that changes between the check and the connect (rebinding) cannot
 * redirect the request. TLS still verifies the certificate against the hostname. Redirects are not followed.
 */

/** What a target may be. `allowLoopback` is local mode: a developer receiving on their own machine. */
export interface SsrfPolicy {
  allowLoopback: boolean;
  /** Plain `http:` targets; local mode only. */
  allowInsecure: boolean;
}

/** A resolved address. */
export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Resolves a hostname to all of its addresses; injectable so tests need no real DNS. */
export type HostResolver = (hostname: string) => Promise<ResolvedAddress[]>;

export const systemResolver: HostResolver = async (hostname) =>
  (await dnsLookup(hostname, { all: true, verbatim: true })).map((entry) => ({
    address: entry.address,
    family: entry.family === 6 ? 6 : 4,
  }));

/** A target the policy refuses; `reason` says why in words an operator can act on. */
export class SsrfError extends Error {
  override readonly name = 'SsrfError';
}

// One list per rule and family: a BlockList also matches IPv4 addresses against IPv6 rules (as ::ffff:a.b.c.d),
// which would make ::ffff:0:0/96 swallow every IPv4 address.
const loopbackV4 = new BlockList();
loopbackV4.addSubnet('127.0.0.0', 8, 'ipv4');
const loopbackV6 = new BlockList();
loopbackV6.addAddress('::1', 'ipv6');

/** Ranges no outbound request may reach, with the name used in error messages. */
const FORBIDDEN: [string, number, 'ipv4' | 'ipv6', string][] = [
  ['0.0.0.0', 8, 'ipv4', '"this network" (0.0.0.0/8)'],
  ['10.0.0.0', 8, 'ipv4', 'private (10.0.0.0/8)'],
  ['100.64.0.0', 10, 'ipv4', 'carrier-grade NAT (100.64.0.0/10)'],
  ['127.0.0.0', 8, 'ipv4', 'loopback (127.0.0.0/8)'],
  ['169.254.0.0', 16, 'ipv4', 'link-local / cloud metadata (169.254.0.0/16)'],
  ['172.16.0.0', 12, 'ipv4', 'private (172.16.0.0/12)'],
  ['192.0.0.0', 24, 'ipv4', 'IETF protocol assignments (192.0.0.0/24)'],
  ['192.0.2.0', 24, 'ipv4', 'documentation (192.0.2.0/24)'],
  ['192.88.99.0', 24, 'ipv4', '6to4 relay (192.88.99.0/24)'],
  ['192.168.0.0', 16, 'ipv4', 'private (192.168.0.0/16)'],
  ['198.18.0.0', 15, 'ipv4', 'benchmarking (198.18.0.0/15)'],
  ['198.51.100.0', 24, 'ipv4', 'documentation (198.51.100.0/24)'],
  ['203.0.113.0', 24, 'ipv4', 'documentation (203.0.113.0/24)'],
  ['224.0.0.0', 4, 'ipv4', 'multicast (224.0.0.0/4)'],
  ['240.0.0.0', 4, 'ipv4', 'reserved / broadcast (240.0.0.0/4)'],
  ['::', 128, 'ipv6', 'unspecified (::)'],
  ['::1', 128, 'ipv6', 'loopback (::1)'],
  ['::ffff:0:0', 96, 'ipv6', 'IPv4-mapped IPv6 (::ffff:0:0/96)'],
  ['::', 96, 'ipv6', 'IPv4-compatible IPv6 (::/96)'],
  ['64:ff9b::', 96, 'ipv6', 'NAT64 (64:ff9b::/96)'],
  ['64:ff9b:1::', 48, 'ipv6', 'local NAT64 (64:ff9b:1::/48)'],
  ['100::', 64, 'ipv6', 'discard (100::/64)'],
  ['2001::', 23, 'ipv6', 'IETF protocol assignments incl. Teredo (2001::/23)'],
  ['2001:db8::', 32, 'ipv6', 'documentation (2001:db8::/32)'],
  ['2002::', 16, 'ipv6', '6to4 (2002::/16)'],
  ['fc00::', 7, 'ipv6', 'unique local incl. fd00::/8 metadata (fc00::/7)'],
  ['fe80::', 10, 'ipv6', 'link-local (fe80::/10)'],
  ['fec0::', 10, 'ipv6', 'site-local (fec0::/10)'],
  ['ff00::', 8, 'ipv6', 'multicast (ff00::/8)'],
];
const forbiddenLists = FORBIDDEN.map(([network, prefix, type, label]) => {
  const list = new BlockList();
  list.addSubnet(network, prefix, type);
  return { list, label, type };
});

/**
 * Why `address` may not be reached under `policy`, or undefined when it may. Anything that is not a valid
 * IP literal is refused too.
 */
export function forbiddenAddressReason(address: string, policy: Pick<SsrfPolicy, 'allowLoopback'>): string | undefined {
  const version = isIP(address);
  if (version === 0) return 'not an IP address';
  const type = version === 4 ? 'ipv4' : 'ipv6';
  try {
    if (policy.allowLoopback && (type === 'ipv4' ? loopbackV4 : loopbackV6).check(address, type)) return undefined;
    // The explicit ::ffff:0:0/96 entry refuses the IPv4-mapped form whatever IPv4 address it carries.
    for (const rule of forbiddenLists) if (rule.type === type && rule.list.check(address, type)) return rule.label;
  } catch {
    return 'unparseable address';
  }
  return undefined;
}

/** A URL the policy accepts, with the address to connect to. */
export interface VettedTarget {
  url: URL;
  address: ResolvedAddress;
}

/**
 * Parses and vets a target URL: scheme (https, or http in local mode), no credentials, and every address the
 * hostname resolves to. Throws `SsrfError` naming the problem.
 */
export async function vetTarget(
  rawUrl: string,
  policy: SsrfPolicy,
  resolve: HostResolver = systemResolver,
): Promise<VettedTarget> {
  const url = vetUrlStatically(rawUrl, policy);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  let addresses: ResolvedAddress[];
  if (isIP(host)) {
    addresses = [{ address: host, family: isIP(host) === 6 ? 6 : 4 }];
  } else {
    try {
      addresses = await resolve(host);
    } catch (error) {
      throw new SsrfError(`cannot resolve ${host}: ${(error as { code?: string }).code ?? (error as Error).message}`);
    }
    if (addresses.length === 0) throw new SsrfError(`${host} has no addresses`);
  }
  // Every answer must pass: a name resolving to one public and one internal address is refused, since the
  // connection could be steered to either.
  for (const candidate of addresses) {
    const reason = forbiddenAddressReason(candidate.address, policy);
    if (reason) throw new SsrfError(`${host} resolves to ${candidate.address}, a ${reason} address`);
  }
  return { url, address: addresses[0] as ResolvedAddress };
}

/**
 * The checks that need no DNS, for vetting a URL when it is saved (names are resolved, and vetted again, at
 * each request): scheme, credentials, and an address written in the URL itself (or `localhost`).
 */
export function vetUrlStatically(rawUrl: string, policy: SsrfPolicy): URL {
  let url: URL;
  try {
    url = new URL(rawUrl);
  } catch {
    throw new SsrfError(`${JSON.stringify(rawUrl)} is not a URL`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new SsrfError(`only https URLs are allowed, got ${url.protocol}`);
  }
  if (url.protocol === 'http:' && !policy.allowInsecure) {
    throw new SsrfError('the URL must use https (plain http is only allowed in local mode)');
  }
  if (url.username || url.password) throw new SsrfError('the URL must not contain credentials');
  // The WHATWG parser already normalised decimal/octal/hex IPv4 forms (http://2130706433/ → 127.0.0.1).
  const host = url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  const literal = isIP(host) ? host : host === 'localhost' || host.endsWith('.localhost') ? '127.0.0.1' : undefined;
  const reason = literal ? forbiddenAddressReason(literal, policy) : undefined;
  if (reason) throw new SsrfError(`${host} is a ${reason} address`);
  return url;
}

/** What a guarded request answered. */
export interface GuardedResponse {
  statusCode: number;
  /** At most `maxBodyBytes` of the response body, as text. */
  body: string;
}

export interface GuardedRequestInput {
  method: 'POST' | 'GET';
  url: string;
  headers: Record<string, string>;
  body?: string;
  /** Whole-request deadline: connect, send and response. */
  timeoutMs: number;
  policy: SsrfPolicy;
  resolve?: HostResolver;
  signal?: AbortSignal;
  /** How much of the response body to keep (default 2 KB); the rest is discarded. */
  maxBodyBytes?: number;
}

/** Sends one request to a vetted, pinned address. Throws `SsrfError` for a refused target. */
export async function guardedRequest(input: GuardedRequestInput): Promise<GuardedResponse> {
  if (input.signal?.aborted) throw new Error('aborted');
  const target = await vetTarget(input.url, input.policy, input.resolve);
  const pinned: LookupFunction = (_hostname, options, callback) => {
    // With autoSelectFamily (Node ≥ 20 default) net asks for all addresses.
    if ((options as { all?: boolean }).all) {
      (callback as unknown as (error: null, addresses: { address: string; family: number }[]) => void)(null, [
        { address: target.address.address, family: target.address.family },
      ]);
    } else {
      callback(null, target.address.address, target.address.family);
    }
  };
  const maxBodyBytes = input.maxBodyBytes ?? 2048;
  const transport = target.url.protocol === 'https:' ? https : http;
  return new Promise<GuardedResponse>((resolve, reject) => {
    let settled = false;
    const finish = (error: Error | undefined, response?: GuardedResponse) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      input.signal?.removeEventListener('abort', onAbort);
      if (error) reject(error);
      else resolve(response as GuardedResponse);
    };
    const request = transport.request(
      target.url,
      {
        method: input.method,
        headers: {
          ...input.headers,
          ...(input.body !== undefined ? { 'content-length': String(Buffer.byteLength(input.body)) } : {}),
        },
        lookup: pinned,
        agent: false,
      },
      (response) => {
        const chunks: Buffer[] = [];
        let kept = 0;
        response.on('data', (chunk: Buffer) => {
          if (kept < maxBodyBytes) {
            chunks.push(chunk.subarray(0, maxBodyBytes - kept));
            kept += Math.min(chunk.length, maxBodyBytes - kept);
          }
        });
        response.on('end', () =>
          finish(undefined, { statusCode: response.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }),
        );
        response.on('error', (error) => finish(error));
      },
    );
    const timer = setTimeout(() => {
      request.destroy(new Error(`no complete answer within ${input.timeoutMs} ms`));
    }, input.timeoutMs);
    const onAbort = () => request.destroy(new Error('aborted'));
    input.signal?.addEventListener('abort', onAbort, { once: true });
    request.on('error', (error) => finish(error));
    request.end(input.body);
  });
}
