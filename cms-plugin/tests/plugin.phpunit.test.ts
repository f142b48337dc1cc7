import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { computeSignature } from '@pts/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type PluginFixture, startPluginFixture } from './support/fixture.ts';
import { PLUGIN_DIR } from './support/global-setup.ts';

// The plugin's PHP (REST controller, settings, signing, site events) under Debian's phpunit, inside a real
// WordPress with the plugin installed from its zip, calling the real core-api (PGlite + anvil).

const run = promisify(execFile);
let fixture: PluginFixture;
let expensivePerk: { uuid: string };

beforeAll(async () => {
  fixture = await startPluginFixture({
    users: [{ login: 'dana', email: 'dana@example.com' }],
    pages: [{ slug: 'rewards', title: 'Rewards', content: '[pts_checkin]' }],
    woocommerce: true,
  });
  expensivePerk = await fixture.createPerk('Golden Ticket', 100_000);
}, 180_000);

afterAll(async () => {
  await fixture?.stop();
});

/** PHP's signature for one input, computed by the plugin's Pts_Signer in a separate PHP process. */
async function phpSignature(
  key: string,
  timestamp: number,
  method: string,
  path: string,
  body: string,
): Promise<string> {
  const script = `define('ABSPATH', '/'); require $argv[1]; echo Pts_Signer::signature($argv[2], (int) $argv[3], $argv[4], $argv[5], $argv[6]);`;
  const signer = join(PLUGIN_DIR, 'includes', 'class-pts-signer.php');
  const { stdout } = await run('php', ['-r', script, '--', signer, key, String(timestamp), method, path, body]);
  return stdout;
}

describe('pts-loyalty PHP', () => {
  it('signs exactly like shared/src/signing.ts for the same input', async () => {
    const inputs = [
      {
        securityKey: 'pts_sk_abc',
        timestamp: 1_700_000_000,
        method: 'POST',
        pathWithQuery: '/services/checkin',
        body: '{"a":1}',
      },
      {
        securityKey: 'pts_sk_ü∑',
        timestamp: 1,
        method: 'get',
        pathWithQuery: '/services/balance/0xab/a%2Bb%40example.com?x=1&y=%20',
        body: '',
      },
      {
        securityKey: 'k',
        timestamp: 2_000_000_000,
        method: 'PUT',
        pathWithQuery: '/x',
        body: '{"name":"Café ☕","n":"\\u00e9"}',
      },
    ];
    for (const input of inputs) {
      const php = await phpSignature(input.securityKey, input.timestamp, input.method, input.pathWithQuery, input.body);
      expect(php).toBe(computeSignature(input));
    }
  });

  it('passes the REST, settings, signing and site-event tests (phpunit) against the real core-api', async () => {
    const { exitCode, output } = await fixture.wordpress.phpunit({
      PTS_CORE_DOWN_URL: fixture.downUrl,
      PTS_UNKNOWN_PERK_ID: randomUUID(),
      PTS_EXPENSIVE_PERK_ID: expensivePerk.uuid,
      PTS_UNKNOWN_BRAND: `0x${'ab'.repeat(20)}`,
    });
    expect(exitCode, output).toBe(0);
    expect(output).toMatch(/OK \(\d+ tests, \d+ assertions\)/);
  }, 180_000);

  it('rewarded only what the tests earned: one check-in for dana, nothing for refused calls', async () => {
    const events = await fixture.platform.deps.db
      .selectFrom('events')
      .select(['event_type', 'user_email', 'metadata'])
      .where('user_email', '=', 'dana@example.com')
      .execute();
    expect(
      events.map((e) => e.event_type),
      JSON.stringify(events),
    ).toEqual(['daily_checkin']);
    const redemptions = await fixture.platform.deps.db.selectFrom('perk_redemptions').selectAll().execute();
    expect(redemptions).toEqual([]);
  });

  it('wrote no PHP warning or notice from the plugin to the debug log', () => {
    expect(fixture.wordpress.debugLog()).not.toMatch(/pts-loyalty/);
  });
});
