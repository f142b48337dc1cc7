import { type CreatedBrand, signRequest } from '@pts/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentRequest, createFixtureKey } from '../../../test/agent-fixture.ts';
import { startTestPlatform, type TestPlatform } from '../../../test/platform.ts';
import { type PortalBrowser, portalMember } from '../../../test/portal-browser.ts';
import { createPerkViaAdmin } from '../../agent/tools/tool-test-support.ts';
import { runCli } from '../../cli/run-cli.ts';

// The brand's audit log (issue 22, item 7): changes to the program, team, keys and integrations made through
// the portal, the CLI / admin API, an agent key and the brand's signed API all appear in the brand's log, with
// the right actor, and nowhere else; filters and paging.

let platform: TestPlatform;
let shop: CreatedBrand;
let other: CreatedBrand;
let owner: PortalBrowser;
const admin = () => ({ authorization: `Bearer ${platform.deps.adminToken}` });
let agentKeyId = '';

async function put(path: string, body: unknown) {
  const res = await fetch(`${platform.url}${path}`, {
    method: 'PUT',
    headers: { ...admin(), 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(res.status, await res.clone().text()).toBe(200);
}

beforeAll(async () => {
  platform = await startTestPlatform({ PTS_RATE_LIMIT_IP_PER_MINUTE: '100000' });
  shop = await platform.createBrand({ name: 'shop', domain: 'shop.example.com' });
  other = await platform.createBrand({ name: 'other', domain: 'other.example.com' });
  owner = await portalMember(platform, shop.brandId, 'owner@shop.example.com', 'owner');

  // The portal: a rule and an invite.
  const rule = await owner.request('PUT', `/brands/${shop.brandId}/rules/portal_rule`, {
    rewardAmount: 7,
    cooldownHours: 0,
    maxClaims: -1,
  });
  expect(rule.status, JSON.stringify(rule.body)).toBe(200);
  expect(
    (await owner.request('POST', `/brands/${shop.brandId}/invites`, { email: 'v@shop.example.com', role: 'viewer' }))
      .status,
  ).toBe(201);

  // The CLI (admin token): a rule; the admin API: a perk, a campaign, achievements, an agent key.
  let out = '';
  const code = await runCli(
    ['rule', 'set', '--brand', shop.brandId, '--event-type', 'cli_rule', '--reward', '3', '--json'],
    {
      env: { PTS_URL: platform.url, PTS_ADMIN_TOKEN: platform.deps.adminToken },
      stdout: { write: (text: string) => (out += text) },
      stderr: { write: () => true },
    },
  );
  expect(code, out).toBe(0);
  await createPerkViaAdmin(platform, shop.brandId, { name: 'Mug', cost: 10 });
  const campaign = await platform.post(
    `/admin/brands/${shop.brandId}/campaigns`,
    { hashtag: '#shopdays', reward: 5, startDate: '2026-01-01T00:00:00Z', endDate: '2027-01-01T00:00:00Z' },
    admin(),
  );
  expect(campaign.status, JSON.stringify(campaign.body)).toBe(201);
  await put(`/admin/brands/${shop.brandId}/achievements`, {
    definitions: [{ id: 'first', type: 'events_claimed', threshold: 1, name: 'First', description: 'One event' }],
  });
  const key = await platform.post(
    '/admin/agent-keys',
    { name: 'shop bot', brandIds: [shop.brandId], canManageProgram: true },
    admin(),
  );
  expect(key.status, JSON.stringify(key.body)).toBe(201);
  agentKeyId = key.body.keyId;

  // An agent key: a rule through the agent API.
  const agent = await agentRequest(platform, {
    method: 'POST',
    path: `/brands/${shop.brandId}/events`,
    body: { eventType: 'agent_rule', rewardAmount: 2, maxClaims: 0, cooldownHours: 0 },
    key: { keyId: key.body.keyId, secret: key.body.secret },
  });
  expect(agent.status, JSON.stringify(agent.body)).toBe(200);

  // The brand's signed API: streak settings.
  const path = `/services/streak/settings/${shop.brandId}`;
  const raw = JSON.stringify({ graceHours: 48 });
  const timestamp = Math.floor(platform.clock.now().getTime() / 1000);
  const streak = await fetch(`${platform.url}${path}`, {
    method: 'PUT',
    headers: {
      ...signRequest({ securityKey: shop.securityKey, method: 'PUT', pathWithQuery: path, body: raw, timestamp }),
      'content-type': 'application/json',
    },
    body: raw,
  });
  expect(streak.status, await streak.clone().text()).toBe(200);

  // Another brand's change, which must not show.
  await createFixtureKey(platform, { name: 'elsewhere', brandIds: [other.brandId] });
  await platform.setRule(other.brandId, { eventType: 'other_rule', rewardAmount: 1, cooldownHours: 0, maxClaims: -1 });
}, 180_000);

afterAll(async () => {
  await platform?.stop();
});

type Entry = {
  actor: string;
  actorKind: string;
  action: string;
  subject: string | null;
  details: Record<string, unknown>;
};
const audit = async (query = '') => {
  const answer = await owner.request('GET', `/brands/${shop.brandId}/audit${query}`);
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  return answer.body as { entries: Entry[]; nextBefore: string | null };
};

describe('the audit log names who changed what', () => {
  it('portal, CLI/admin, agent key and signed-API changes are all in the brand log with their actor', async () => {
    const { entries } = await audit('?limit=200');
    const seen = entries.map((e) => `${e.actorKind} ${e.actor} ${e.action}`);
    expect(seen).toEqual(
      expect.arrayContaining([
        'portal portal:owner@shop.example.com rule.set',
        'portal portal:owner@shop.example.com portal.invite',
        'admin admin rule.set',
        'admin admin perk.create',
        'admin admin campaign.create',
        'admin admin achievement.set',
        'admin admin agent_key.create',
        `agent agent:${agentKeyId} rule.set`,
        'brand brand-key streak.settings',
        'portal portal:owner@shop.example.com portal.invite_accepted',
      ]),
    );
    const ruleSets = entries.filter((e) => e.action === 'rule.set');
    expect(ruleSets.map((e) => e.details.eventType).sort()).toEqual(['agent_rule', 'cli_rule', 'portal_rule']);
    expect(entries.find((e) => e.action === 'agent_key.create')?.subject).toBe(agentKeyId);
    // Nothing of the other brand, and no secret.
    expect(JSON.stringify(entries)).not.toContain('other_rule');
    expect(JSON.stringify(entries)).not.toContain('elsewhere');
    expect(JSON.stringify(entries)).not.toContain(shop.securityKey);
  });

  it('filters by actor kind, actor, action prefix and time; pages with before', async () => {
    const agents = await audit('?actorKind=agent');
    expect(agents.entries.map((e) => e.action)).toEqual(['rule.set']);
    const rules = await audit('?action=rule.');
    expect(rules.entries.every((e) => e.action.startsWith('rule.'))).toBe(true);
    expect(rules.entries).toHaveLength(3);
    const byOwner = await audit('?actor=OWNER@shop');
    expect(byOwner.entries.length).toBeGreaterThanOrEqual(3);
    expect(byOwner.entries.every((e) => e.actor === 'portal:owner@shop.example.com')).toBe(true);
    const future = await audit('?from=2999-01-01T00:00:00Z');
    expect(future.entries).toEqual([]);
    const first = await audit('?limit=2');
    expect(first.entries).toHaveLength(2);
    const second = await audit(`?limit=2&before=${first.nextBefore}`);
    expect(second.entries).toHaveLength(2);
    const all = await audit('?limit=4');
    expect([...first.entries, ...second.entries]).toEqual(all.entries);
    const bad = await owner.request('GET', `/brands/${shop.brandId}/audit?actorKind=robot`);
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatch(/actorKind must be one of portal, operator, admin, agent, brand, system/);
  });

  it('revoking the key is audited too; another brand’s log is 404 for this owner', async () => {
    const revoked = await platform.post(`/admin/agent-keys/${agentKeyId}/revoke`, {}, admin());
    expect(revoked.status, JSON.stringify(revoked.body)).toBe(200);
    const { entries } = await audit('?action=agent_key.');
    expect(entries.map((e) => e.action)).toEqual(['agent_key.revoke', 'agent_key.create']);
    expect((await owner.request('GET', `/brands/${other.brandId}/audit`)).status).toBe(404);
  });
});
