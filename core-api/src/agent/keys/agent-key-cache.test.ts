import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AgentKeyCredentials, agentRequest, createFixtureKey } from '../../../test/agent-fixture.ts';
import { startTestPlatform, type TestPlatform } from '../../../test/platform.ts';

// Signature checks read live agent keys through a cache (app.ts): a revocation through this process applies
// at once; one made by another process on the same database (here: straight in the table) within
// PTS_RULE_CACHE_SECONDS.

let platform: TestPlatform;

beforeAll(async () => {
  platform = await startTestPlatform({ PTS_RULE_CACHE_SECONDS: '5' });
}, 120_000);

afterAll(async () => {
  await platform?.stop();
});

const whoAmI = (key: AgentKeyCredentials) =>
  agentRequest(platform, { method: 'GET', path: '/agent/rewards', key }).then((res) => res.status);

describe('agent key cache', () => {
  it('refuses a key revoked through the admin API on the very next request', async () => {
    const key = await createFixtureKey(platform, { name: 'revoked-here' });
    expect(await whoAmI(key)).toBe(200);
    const revoke = await fetch(`${platform.url}/admin/agent-keys/${key.keyId}/revoke`, {
      method: 'POST',
      headers: { authorization: `Bearer ${platform.deps.adminToken}` },
    });
    expect(revoke.status).toBe(200);
    expect(await whoAmI(key)).toBe(401);
  });

  it('refuses a key revoked by another process once the cache window has passed', async () => {
    const key = await createFixtureKey(platform, { name: 'revoked-elsewhere' });
    expect(await whoAmI(key)).toBe(200);
    await platform.deps.db
      .updateTable('agent_keys')
      .set({ revoked_at: platform.clock.now() })
      .where('key_id', '=', key.keyId)
      .execute();
    // Within the window the key read a moment ago still verifies (the documented trade-off) …
    expect(await whoAmI(key)).toBe(200);
    platform.clock.advance(5_000);
    // … and after it, never again.
    expect(await whoAmI(key)).toBe(401);
  });

  it('reads the key row once per window, not once per request', async () => {
    const key = await createFixtureKey(platform, { name: 'busy' });
    expect(await whoAmI(key)).toBe(200);
    // The row is gone from the table, yet the process still knows the key inside the window: no read was made.
    await platform.deps.db.deleteFrom('agent_keys').where('key_id', '=', key.keyId).execute();
    for (let i = 0; i < 3; i++) expect(await whoAmI(key)).toBe(200);
    platform.clock.advance(5_000);
    expect(await whoAmI(key)).toBe(401);
  });
});
