import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  forbiddenAddressReason,
  guardedRequest,
  type HostResolver,
  SsrfError,
  type SsrfPolicy,
  vetTarget,
} from './ssrf-guard.ts';

const strict: SsrfPolicy = { allowInsecure: false, allowLoopback: false };
const local: SsrfPolicy = { allowInsecure: true, allowLoopback: true };

/** A resolver answering from a table and counting lookups, so no test depends on real DNS. */
function fakeResolver(table: Record<string, string[]>): HostResolver & { calls: string[] } {
  const calls: string[] = [];
  const resolve = async (hostname: string) => {
    calls.push(hostname);
    const addresses = table[hostname];
    if (!addresses) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return addresses.map((address) => ({ address, family: (address.includes(':') ? 6 : 4) as 4 | 6 }));
  };
  return Object.assign(resolve, { calls });
}

describe('forbiddenAddressReason (strict mode)', () => {
  const refused: [string, RegExp][] = [
    ['127.0.0.1', /loopback/],
    ['127.255.255.254', /loopback/],
    ['10.1.2.3', /private/],
    ['172.16.0.1', /private/],
    ['172.31.255.255', /private/],
    ['192.168.1.1', /private/],
    ['169.254.169.254', /metadata/],
    ['169.254.0.1', /link-local/],
    ['100.64.0.1', /carrier-grade NAT/],
    ['100.127.255.255', /carrier-grade NAT/],
    ['0.0.0.0', /this network/],
    ['0.1.2.3', /this network/],
    ['224.0.0.1', /multicast/],
    ['239.255.255.250', /multicast/],
    ['255.255.255.255', /broadcast/],
    ['240.0.0.1', /reserved/],
    ['192.0.0.192', /IETF/],
    ['198.18.0.1', /benchmarking/],
    ['::1', /loopback/],
    ['::', /unspecified/],
    ['::ffff:127.0.0.1', /IPv4-mapped/],
    ['::ffff:169.254.169.254', /IPv4-mapped/],
    ['::ffff:8.8.8.8', /IPv4-mapped/],
    ['::127.0.0.1', /IPv4-compatible/],
    ['fd00::1', /unique local/],
    ['fd00:ec2::254', /unique local/],
    ['fc00::1', /unique local/],
    ['fe80::1', /link-local/],
    ['ff02::1', /multicast/],
    ['64:ff9b::a9fe:a9fe', /NAT64/],
    ['2002:7f00:1::', /6to4/],
    ['2001:0:4136:e378::1', /Teredo/],
    ['2001:db8::1', /documentation/],
    ['not-an-ip', /not an IP/],
  ];
  it.each(refused)('refuses %s', (address, reason) => {
    expect(forbiddenAddressReason(address, strict)).toMatch(reason);
  });

  const allowed = ['8.8.8.8', '1.1.1.1', '93.184.216.34', '172.32.0.1', '100.128.0.1', '2606:4700:4700::1111'];
  it.each(allowed)('allows public %s', (address) => {
    expect(forbiddenAddressReason(address, strict)).toBeUndefined();
  });

  it('allows loopback, and only loopback, in local mode', () => {
    expect(forbiddenAddressReason('127.0.0.1', local)).toBeUndefined();
    expect(forbiddenAddressReason('::1', local)).toBeUndefined();
    for (const address of ['10.0.0.1', '169.254.169.254', '192.168.0.1', 'fd00::1', '0.0.0.0']) {
      expect(forbiddenAddressReason(address, local), address).toBeDefined();
    }
  });
});

describe('vetTarget', () => {
  it('refuses a hostname that resolves to 127.0.0.1 in strict mode, allows it in local mode', async () => {
    const resolve = fakeResolver({ 'hooks.attacker.example': ['127.0.0.1'] });
    await expect(vetTarget('https://hooks.attacker.example/x', strict, resolve)).rejects.toThrow(
      /hooks\.attacker\.example resolves to 127\.0\.0\.1, a loopback/,
    );
    await expect(vetTarget('https://hooks.attacker.example/x', local, resolve)).resolves.toMatchObject({
      address: { address: '127.0.0.1', family: 4 },
    });
  });

  it('refuses a hostname when any of its addresses is internal', async () => {
    const resolve = fakeResolver({ 'mixed.example': ['93.184.216.34', '10.0.0.5'] });
    await expect(vetTarget('https://mixed.example/', strict, resolve)).rejects.toThrow(/10\.0\.0\.5, a private/);
  });

  it('refuses IP literals in every spelling the URL parser accepts', async () => {
    const resolve = fakeResolver({});
    for (const url of [
      'https://127.0.0.1/',
      'https://2130706433/',
      'https://0x7f.0.0.1/',
      'https://017700000001/',
      'https://[::1]/',
      'https://[::ffff:127.0.0.1]/',
      'https://169.254.169.254/latest/meta-data/',
      'https://[fd00:ec2::254]/',
      'https://0/',
    ]) {
      await expect(vetTarget(url, strict, resolve), url).rejects.toBeInstanceOf(SsrfError);
    }
    expect(resolve.calls).toEqual([]);
  });

  it('requires https unless insecure targets are allowed, and refuses other schemes and credentials', async () => {
    const resolve = fakeResolver({ 'hooks.example.com': ['93.184.216.34'] });
    await expect(vetTarget('http://hooks.example.com/', strict, resolve)).rejects.toThrow(/must use https/);
    await expect(vetTarget('https://hooks.example.com/', strict, resolve)).resolves.toBeDefined();
    await expect(vetTarget('http://hooks.example.com/', local, resolve)).resolves.toBeDefined();
    await expect(vetTarget('ftp://hooks.example.com/', local, resolve)).rejects.toThrow(/only https/);
    await expect(vetTarget('file:///etc/passwd', local, resolve)).rejects.toThrow(/only https/);
    await expect(vetTarget('https://user:pw@hooks.example.com/', strict, resolve)).rejects.toThrow(/credentials/);
    await expect(vetTarget('https://nowhere.example/', strict, resolve)).rejects.toThrow(/cannot resolve.*ENOTFOUND/);
  });
});

describe('guardedRequest', () => {
  let server: Server;
  let port: number;
  const hosts: string[] = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      hosts.push(req.headers.host ?? '');
      res.writeHead(204).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    port = (server.address() as AddressInfo).port;
  });

  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('connects to the vetted address, resolving the name once (no second lookup to rebind)', async () => {
    // The name exists only in the fake resolver: reaching the server proves the socket used the pinned
    // address rather than a lookup of its own.
    const resolve = fakeResolver({ 'receiver.test': ['127.0.0.1'] });
    const response = await guardedRequest({
      method: 'POST',
      url: `http://receiver.test:${port}/hooks`,
      headers: { 'content-type': 'application/json' },
      body: '{}',
      timeoutMs: 2_000,
      policy: local,
      resolve,
    });
    expect(response.statusCode).toBe(204);
    expect(resolve.calls).toEqual(['receiver.test']);
    expect(hosts.at(-1)).toBe(`receiver.test:${port}`);
  });

  it('refuses before connecting when the target is internal in strict mode', async () => {
    const before = hosts.length;
    const resolve = fakeResolver({ 'receiver.test': ['127.0.0.1'] });
    await expect(
      guardedRequest({
        method: 'POST',
        url: `https://receiver.test:${port}/hooks`,
        headers: {},
        body: '{}',
        timeoutMs: 2_000,
        policy: strict,
        resolve,
      }),
    ).rejects.toBeInstanceOf(SsrfError);
    expect(hosts.length).toBe(before);
  });
});
