import { request } from 'node:http';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseCsv } from '../../../test/csv.ts';
import { startTestPlatform, type TestPlatform } from '../../../test/platform.ts';
import { type PortalBrowser, portalMember } from '../../../test/portal-browser.ts';

// The member export is streamed (issue 33 §12): 20,000 members, the reader pauses after the first chunk, a
// member joins meanwhile, and the rest of the file holds them — so the rows were being read while the file was
// being written, and the server waited for the reader (backpressure) instead of reading everything into memory.
// A buffered export (read all, then send) could never hold a member who joined after the first byte left.

const MEMBERS = 20_000;
// Long keys make the file (~6 MB) far larger than what the loopback socket holds while the reader waits.
const PAD = 'x'.repeat(80);

let platform: TestPlatform;
let brand: { brandId: string; securityKey: string };
let admin: PortalBrowser;

beforeAll(async () => {
  platform = await startTestPlatform();
  brand = await platform.createBrand({ name: 'Stream', domain: 'stream.example.com' });
  admin = await portalMember(platform, brand.brandId, 'admin@stream.example.com', 'admin');
  await sql`
    INSERT INTO events (id, brand_id, event_type, user_email, status, reward_amount, created_at)
    SELECT gen_random_uuid(), ${brand.brandId}, 'earn', 'bulk-' || lpad(g::text, 5, '0') || '-' || ${PAD} || '@stream.example',
           'accepted', 10, timestamptz '2026-01-01T00:00:00Z' + g * interval '1 second'
      FROM generate_series(1, ${MEMBERS}) g`.execute(platform.deps.db);
}, 120_000);

afterAll(async () => {
  await platform?.stop();
});

describe('the member export', () => {
  it('writes rows while it reads them, and waits for a slow reader', async () => {
    const url = new URL(`${platform.url}/portal/api/brands/${brand.brandId}/member-list.csv?sort=joined&order=asc`);
    const cookie = [...admin.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    const chunks: Buffer[] = [];
    let joinedMidway = false;
    await new Promise<void>((resolve, reject) => {
      const req = request(
        url,
        { headers: { cookie, 'accept-encoding': 'identity', 'x-forwarded-for': admin.ip } },
        (res) => {
          expect(res.statusCode).toBe(200);
          res.on('data', (chunk: Buffer) => {
            chunks.push(chunk);
            if (joinedMidway) return;
            joinedMidway = true;
            // The reader stops; a member joins (after everyone else); then the reader goes on.
            res.pause();
            sql`
            INSERT INTO events (id, brand_id, event_type, user_email, status, reward_amount, created_at)
            VALUES (gen_random_uuid(), ${brand.brandId}, 'earn', 'late@stream.example', 'accepted', 10,
                    timestamptz '2026-12-01T00:00:00Z')`
              .execute(platform.deps.db)
              .then(() => res.resume(), reject);
          });
          res.on('end', resolve);
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end();
    });
    expect(chunks.length).toBeGreaterThan(1);
    const rows = parseCsv(Buffer.concat(chunks).toString('utf8'));
    expect(rows).toHaveLength(1 + MEMBERS + 1);
    expect(rows[1]![0]).toBe(`bulk-00001-${PAD}@stream.example`);
    expect(rows.at(-1)![0]).toBe('late@stream.example');
  }, 120_000);
});
