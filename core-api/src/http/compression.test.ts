import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { precompressAssets } from '@pts/portal/precompress';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../../test/platform.ts';
import { COMPRESSION_THRESHOLD_BYTES } from './compression.ts';

// Issue 33 §8 over real HTTP (node:http, which never decompresses, so the bytes on the wire are what is read):
// brotli or gzip as Accept-Encoding asks, with Vary; small answers as they are; the portal's assets sent as the
// build compressed them (.br/.gz beside each), with their type, ETag and immutable caching.

let platform: TestPlatform;
let distDir: string;
const ASSET = 'index-Dq3xY7kZ.js';
/** A bundle-like script: long, repetitive, far above the threshold. */
const SCRIPT = Array.from({ length: 400 }, (_, i) => `export const value${i} = () => "portal ${i % 7}";`).join('\n');

interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  bytes: Buffer;
}

/** One GET whose body is kept exactly as it came over the wire. */
function rawGet(path: string, headers: Record<string, string> = {}): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const req = request(`${platform.url}${path}`, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, bytes: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

const decode = (answer: RawAnswer) => {
  const coding = answer.headers['content-encoding'];
  if (coding === 'br') return brotliDecompressSync(answer.bytes).toString('utf8');
  if (coding === 'gzip') return gunzipSync(answer.bytes).toString('utf8');
  return answer.bytes.toString('utf8');
};

const varies = (answer: RawAnswer) =>
  String(answer.headers.vary ?? '')
    .toLowerCase()
    .includes('accept-encoding');

beforeAll(async () => {
  distDir = mkdtempSync(join(tmpdir(), 'pts-portal-dist-'));
  mkdirSync(join(distDir, 'assets'));
  writeFileSync(join(distDir, 'assets', ASSET), SCRIPT);
  writeFileSync(join(distDir, 'assets', 'logo-Ab12Cd34.png'), Buffer.alloc(2048, 7));
  writeFileSync(
    join(distDir, 'index.html'),
    `<!doctype html><html><head><script type="module" src="/portal/assets/${ASSET}"></script></head><body>${'<div></div>'.repeat(200)}</body></html>`,
  );
  expect(precompressAssets(join(distDir, 'assets'))).toEqual([join(distDir, 'assets', ASSET)]);
  platform = await startTestPlatform({ PTS_PORTAL_DIR: distDir });
});

afterAll(async () => {
  await platform?.stop();
  rmSync(distDir, { recursive: true, force: true });
});

describe('compressed answers (issue 33 §8)', () => {
  it('a JSON answer above the threshold comes in brotli or gzip as asked, and decodes to the plain answer', async () => {
    const plain = await rawGet('/openapi.json');
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.bytes.length).toBeGreaterThan(COMPRESSION_THRESHOLD_BYTES);
    expect(varies(plain)).toBe(true);

    // A browser's header: brotli is chosen although gzip comes first.
    const br = await rawGet('/openapi.json', { 'accept-encoding': 'gzip, deflate, br' });
    expect(br.headers['content-encoding']).toBe('br');
    expect(varies(br)).toBe(true);
    expect(br.headers['content-type']).toMatch(/^application\/json/);
    expect(decode(br)).toBe(plain.bytes.toString('utf8'));
    expect(br.bytes.length).toBeLessThan(plain.bytes.length / 4);

    const gzip = await rawGet('/openapi.json', { 'accept-encoding': 'gzip' });
    expect(gzip.headers['content-encoding']).toBe('gzip');
    expect(decode(gzip)).toBe(plain.bytes.toString('utf8'));

    const refused = await rawGet('/openapi.json', { 'accept-encoding': 'br;q=0, gzip;q=0' });
    expect(refused.headers['content-encoding']).toBeUndefined();
  });

  it('an answer below the threshold goes as it is', async () => {
    const small = await rawGet('/portal/api/session', { 'accept-encoding': 'br, gzip' });
    expect(small.status).toBe(200);
    expect(small.bytes.length).toBeLessThan(COMPRESSION_THRESHOLD_BYTES);
    expect(small.headers['content-encoding']).toBeUndefined();
    expect(JSON.parse(small.bytes.toString('utf8')).signedIn).toBe(false);
  });

  it('the portal page is compressed, and stays no-cache', async () => {
    const page = await rawGet('/portal/sign-in', { 'accept-encoding': 'gzip, deflate, br' });
    expect(page.headers['content-encoding']).toBe('br');
    expect(page.headers['cache-control']).toBe('no-cache');
    expect(decode(page)).toBe(readFileSync(join(distDir, 'index.html'), 'utf8'));
  });

  it("serves an asset's build-time .br or .gz as it is, with the asset's type, Vary, ETag and immutable caching", async () => {
    const br = await rawGet(`/portal/assets/${ASSET}`, { 'accept-encoding': 'gzip, deflate, br, zstd' });
    expect(br.status).toBe(200);
    expect(br.headers['content-encoding']).toBe('br');
    expect(br.headers['content-type']).toMatch(/^text\/javascript/);
    expect(varies(br)).toBe(true);
    expect(br.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(br.bytes.equals(readFileSync(join(distDir, 'assets', `${ASSET}.br`)))).toBe(true);
    expect(decode(br)).toBe(SCRIPT);
    const etag = String(br.headers.etag);
    expect(etag).toMatch(/^W\/"|^"/);
    const again = await rawGet(`/portal/assets/${ASSET}`, { 'accept-encoding': 'br', 'if-none-match': etag });
    expect(again.status).toBe(304);

    const gzip = await rawGet(`/portal/assets/${ASSET}`, { 'accept-encoding': 'gzip' });
    expect(gzip.headers['content-encoding']).toBe('gzip');
    expect(gzip.bytes.equals(readFileSync(join(distDir, 'assets', `${ASSET}.gz`)))).toBe(true);
    expect(decode(gzip)).toBe(SCRIPT);
    // Each coding is its own representation: its own ETag.
    expect(gzip.headers.etag).not.toBe(etag);

    const plain = await rawGet(`/portal/assets/${ASSET}`);
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(varies(plain)).toBe(true);
    expect(plain.bytes.toString('utf8')).toBe(SCRIPT);
  });

  it('leaves images alone, and answers an unknown asset 404 uncompressed', async () => {
    const image = await rawGet('/portal/assets/logo-Ab12Cd34.png', { 'accept-encoding': 'br, gzip' });
    expect(image.status).toBe(200);
    expect(image.headers['content-encoding']).toBeUndefined();
    expect(image.bytes.length).toBe(2048);
    const missing = await rawGet('/portal/assets/index-missing.js', { 'accept-encoding': 'br' });
    expect(missing.status).toBe(404);
    expect(decode(missing)).toBe('No such portal asset');
  });
});
