import { DEFAULT_ACHIEVEMENTS, DEFAULT_STREAK_SETTINGS, signRequest } from '@pts/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitForMintsSettled } from '../../../test/chain-helpers.ts';
import { startTestPlatform, type TestPlatform, type TestResponse } from '../../../test/platform.ts';
import { type PortalBrowser, portalMember } from '../../../test/portal-browser.ts';
import { portalEngagementRoutes } from './portal-engagement.routes.ts';

// The Program page's streak settings and achievements against the real platform (PGlite or PostgreSQL,
// anvil, our contracts): the streak service of the signed services API and the achievement service of the
// admin API, so a change shows there and in what members get at once; inline errors from the shared
// schemas; audited with the portal user; roles, CSRF and brand isolation.

let platform: TestPlatform;
let brandA: { brandId: string; securityKey: string };
let brandB: { brandId: string; securityKey: string };
let ownerA: PortalBrowser;
let adminA: PortalBrowser;
let viewerA: PortalBrowser;
let ownerB: PortalBrowser;
const MEMBER = 'regular@customer.example';
const admin = () => ({ authorization: `Bearer ${platform.deps.adminToken}` });
const HOSTILE = '<img src=x onerror=alert(1)>';

const auditRows = (action: string, brandId: string) =>
  platform.deps.db
    .selectFrom('audit_log')
    .selectAll()
    .where('action', '=', action)
    .where('brand_id', '=', brandId)
    .orderBy('id')
    .execute();

/** A brand-signed GET (a new second each, so no signature repeats). */
async function signedGet(path: string, securityKey: string): Promise<TestResponse> {
  platform.clock.advance(1_000);
  const timestamp = Math.floor(platform.clock.now().getTime() / 1000);
  const headers = signRequest({ securityKey, method: 'GET', pathWithQuery: path, body: '', timestamp });
  const response = await fetch(`${platform.url}${path}`, { headers });
  return { status: response.status, headers: response.headers, body: await response.json() };
}

beforeAll(async () => {
  platform = await startTestPlatform();
  const rules = [{ eventType: 'earn', rewardAmount: 10, cooldownHours: 0, maxClaims: -1 }];
  brandA = await platform.createBrand({ name: 'Brand A', domain: 'a.example.com', rules });
  brandB = await platform.createBrand({ name: 'Brand B', domain: 'b.example.com', rules });
  ownerA = await portalMember(platform, brandA.brandId, 'owner@a.example.com', 'owner');
  adminA = await portalMember(platform, brandA.brandId, 'admin@a.example.com', 'admin');
  viewerA = await portalMember(platform, brandA.brandId, 'viewer@a.example.com', 'viewer');
  ownerB = await portalMember(platform, brandB.brandId, 'owner@b.example.com', 'owner');
});

afterAll(async () => {
  await platform?.stop();
});

describe('streak settings and milestones', () => {
  it('reads the defaults, refuses invalid settings with field messages, saves through the streak service', async () => {
    const path = `/brands/${brandA.brandId}/streak-settings`;
    const read = await viewerA.request('GET', path);
    expect(read.status).toBe(200);
    expect(read.body).toEqual({
      success: true,
      brandId: brandA.brandId,
      settings: DEFAULT_STREAK_SETTINGS,
      custom: false,
    });

    const invalid = await adminA.request('PUT', path, {
      graceHours: 12,
      milestones: [
        { days: 10, bonus: 100 },
        { days: 3, bonus: -1 },
      ],
    });
    expect(invalid.status).toBe(400);
    expect(invalid.body.details.errors).toEqual(
      expect.arrayContaining([
        'graceHours: must be at least 24 (a day)',
        expect.stringMatching(/^milestones\.1\.bonus: /),
      ]),
    );
    const unsorted = await adminA.request('PUT', path, {
      milestones: [
        { days: 10, bonus: 100 },
        { days: 3, bonus: 30 },
      ],
    });
    expect(unsorted.status).toBe(400);
    expect(unsorted.body.details.errors).toEqual([
      'milestones: milestones must be sorted by days, each longer than the one before',
    ]);
    expect((await platform.get(`/services/streak/settings/${brandA.brandId}`)).body.custom).toBe(false);

    const milestones = [
      { days: 3, bonus: 30 },
      { days: 10, bonus: 100 },
    ];
    const saved = await adminA.request('PUT', path, { graceHours: 48, milestones, maxFreezes: 1 });
    expect(saved.status, JSON.stringify(saved.body)).toBe(200);
    const expected = { ...DEFAULT_STREAK_SETTINGS, graceHours: 48, milestones, maxFreezes: 1 };
    expect(saved.body).toEqual({ success: true, brandId: brandA.brandId, settings: expected, custom: true });
    // The services API (bots, plugin, brand back-ends) answers the very same settings, at once.
    const services = await platform.get(`/services/streak/settings/${brandA.brandId}`);
    expect(services.body).toEqual({ success: true, brandId: brandA.brandId, settings: expected, custom: true });
    expect((await viewerA.request('GET', path)).body.settings).toEqual(expected);
    // Brand B keeps the defaults.
    expect((await platform.get(`/services/streak/settings/${brandB.brandId}`)).body.custom).toBe(false);

    const [audit] = await auditRows('streak.settings', brandA.brandId);
    expect(audit).toMatchObject({ actor: 'portal:admin@a.example.com', subject: brandA.brandId });
    expect(audit?.details).toEqual({
      graceHours: 48,
      milestones,
      maxFreezes: 1,
      previous: {
        graceHours: DEFAULT_STREAK_SETTINGS.graceHours,
        milestones: DEFAULT_STREAK_SETTINGS.milestones,
        maxFreezes: DEFAULT_STREAK_SETTINGS.maxFreezes,
      },
    });
  });

  it("a member's streak follows the new milestones at once", async () => {
    const activity = await platform.signedPost(
      '/services/streak/record-activity',
      { brandId: brandA.brandId, userIdentifier: MEMBER, platform: 'web' },
      brandA.securityKey,
    );
    expect(activity.status, JSON.stringify(activity.body)).toBe(200);
    expect(activity.body.streak.nextMilestone).toEqual({ days: 3, bonus: 30, daysRemaining: 2 });
    const saved = await ownerA.request('PUT', `/brands/${brandA.brandId}/streak-settings`, {
      milestones: [{ days: 2, bonus: 25 }],
    });
    expect(saved.status).toBe(200);
    const status = await signedGet(
      `/services/streak/status/${brandA.brandId}/${encodeURIComponent(MEMBER)}`,
      brandA.securityKey,
    );
    expect(status.status, JSON.stringify(status.body)).toBe(200);
    expect(status.body.nextMilestone).toEqual({ days: 2, bonus: 25, daysRemaining: 1 });
  });
});

describe('achievements', () => {
  const path = () => `/brands/${brandA.brandId}/achievements`;
  const vip = { id: 'vip_2', type: 'events_claimed', threshold: 2, name: `VIP ${HOSTILE}`, description: 'Two rewards' };

  it('reads the defaults, refuses invalid definitions with field messages, adds one through the admin service', async () => {
    const read = await viewerA.request('GET', path());
    expect(read.status).toBe(200);
    expect(read.body).toEqual({
      success: true,
      brandId: brandA.brandId,
      defaults: true,
      definitions: DEFAULT_ACHIEVEMENTS,
    });

    const invalid = await ownerA.request('PUT', path(), {
      definitions: [
        ...DEFAULT_ACHIEVEMENTS,
        { id: 'Bad Id', type: 'tokens_earned', threshold: 0, name: '', description: '' },
      ],
    });
    expect(invalid.status).toBe(400);
    const n = DEFAULT_ACHIEVEMENTS.length;
    expect(invalid.body.details.errors).toEqual(
      expect.arrayContaining([
        `definitions.${n}.id: id must be 1 to 60 lowercase letters, digits or underscores`,
        expect.stringMatching(new RegExp(`^definitions\\.${n}\\.threshold: `)),
        expect.stringMatching(new RegExp(`^definitions\\.${n}\\.name: `)),
      ]),
    );
    const duplicate = await ownerA.request('PUT', path(), {
      definitions: [...DEFAULT_ACHIEVEMENTS, { ...vip, id: DEFAULT_ACHIEVEMENTS[0]!.id }],
    });
    expect(duplicate.status).toBe(400);
    expect(duplicate.body.details.errors).toEqual(['definitions: definition ids must be unique']);

    const saved = await ownerA.request('PUT', path(), { definitions: [...DEFAULT_ACHIEVEMENTS, vip] });
    expect(saved.status, JSON.stringify(saved.body)).toBe(200);
    expect(saved.body).toEqual({
      success: true,
      brandId: brandA.brandId,
      defaults: false,
      definitions: [...DEFAULT_ACHIEVEMENTS, vip],
    });
    // The admin API (and the CLI and agent behind it) reads the very same definitions.
    const adminRead = await platform.get(`/admin/brands/${brandA.brandId}/achievements`, admin());
    expect(adminRead.body).toEqual(saved.body);
    expect((await platform.get(`/admin/brands/${brandB.brandId}/achievements`, admin())).body.defaults).toBe(true);
    const audit = await auditRows('achievement.set', brandA.brandId);
    expect(audit.at(-1)).toMatchObject({ actor: 'portal:owner@a.example.com', subject: brandA.brandId });
    expect(audit.at(-1)?.details).toEqual({
      ids: [...DEFAULT_ACHIEVEMENTS.map((d) => d.id), vip.id],
      added: [vip.id],
      removed: [],
      changed: [],
    });
  });

  it('a member unlocks the new achievement at once; an edit and a removal are audited with what changed', async () => {
    for (let i = 0; i < 2; i++) {
      platform.clock.advance(61_000);
      const earned = await platform.signedPost(
        '/pts-api/manual-event',
        { brandId: brandA.brandId, eventType: 'earn', userEmail: MEMBER },
        brandA.securityKey,
      );
      expect(earned.status, JSON.stringify(earned.body)).toBe(200);
    }
    await waitForMintsSettled(platform);
    const read = async () => {
      const answer = await signedGet(
        `/services/achievements/${brandA.brandId}/${encodeURIComponent(MEMBER)}`,
        brandA.securityKey,
      );
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      return answer.body.achievements.find((a: { id: string }) => a.id === vip.id);
    };
    await expect.poll(read, { timeout: 20_000 }).toMatchObject({ name: vip.name, unlocked: true, progress: 2 });

    const [first, ...rest] = DEFAULT_ACHIEVEMENTS;
    const renamed = { ...vip, name: 'Very important', threshold: 5 };
    const edited = await adminA.request('PUT', path(), { definitions: [...rest, renamed] });
    expect(edited.status, JSON.stringify(edited.body)).toBe(200);
    expect(edited.body.definitions.map((d: { id: string }) => d.id)).not.toContain(first!.id);
    expect((await auditRows('achievement.set', brandA.brandId)).at(-1)).toMatchObject({
      actor: 'portal:admin@a.example.com',
      details: { added: [], removed: [first!.id], changed: [vip.id] },
    });

    const restored = await ownerA.request('PUT', path(), { definitions: [] });
    expect(restored.body).toMatchObject({ defaults: true, definitions: DEFAULT_ACHIEVEMENTS });
    expect((await auditRows('achievement.set', brandA.brandId)).at(-1)?.details).toMatchObject({
      ids: [],
      restoredDefaults: true,
      added: [first!.id],
      removed: [vip.id],
    });
    // Put the VIP definition back for the next tests.
    expect((await ownerA.request('PUT', path(), { definitions: [vip] })).status).toBe(200);
  });
});

describe('roles, CSRF and brand isolation', () => {
  const unchanged = async () => {
    const streaks = await platform.get(`/services/streak/settings/${brandA.brandId}`);
    expect(streaks.body.settings.milestones).toEqual([{ days: 2, bonus: 25 }]);
    const achievements = await platform.get(`/admin/brands/${brandA.brandId}/achievements`, admin());
    expect(achievements.body.definitions.map((d: { id: string }) => d.id)).toEqual(['vip_2']);
  };
  const changes = (brandId: string): [string, string, unknown][] => [
    ['PUT', `/brands/${brandId}/streak-settings`, { milestones: [{ days: 1, bonus: 1_000_000 }] }],
    ['PUT', `/brands/${brandId}/achievements`, { definitions: [] }],
  ];

  it('a viewer reads but every change is refused with 403, and nothing changes', async () => {
    for (const [method, path, body] of changes(brandA.brandId)) {
      const answer = await viewerA.request(method, path, body);
      expect(answer.status, `${method} ${path}`).toBe(403);
      expect(answer.body.error).toMatch(/viewer/);
    }
    await unchanged();
  });

  it('a change without the CSRF token (or with a wrong one) is refused and changes nothing', async () => {
    for (const [method, path, body] of changes(brandA.brandId)) {
      const missing = await ownerA.request(method, path, body, { csrf: false });
      expect(missing.status, `${method} ${path}`).toBe(403);
      expect(missing.body.error).toMatch(/CSRF/);
      const saved = ownerA.csrf;
      ownerA.csrf = 'A'.repeat(43);
      const wrong = await ownerA.request(method, path, body);
      ownerA.csrf = saved;
      expect(wrong.status, `${method} ${path}`).toBe(403);
    }
    await unchanged();
  });

  it("brand B's owner gets 404 on every streak and achievement route of brand A, and changes nothing", async () => {
    const a = brandA.brandId;
    const attempts: [string, string, unknown?][] = [
      ['GET', `/brands/${a}/streak-settings`],
      ['GET', `/brands/${a}/achievements`],
      ...changes(a),
    ];
    for (const [method, path, body] of attempts) {
      const answer = await ownerB.request(method, path, body);
      expect(answer.status, `${method} ${path}`).toBe(404);
      expect(JSON.stringify(answer.body)).not.toContain('vip_2');
    }
    await unchanged();
    // Signed out: 401, nothing read.
    const stranger = await fetch(`${platform.url}/portal/api/brands/${a}/achievements`);
    expect(stranger.status).toBe(401);
    // Every route of this table is in the OpenAPI document, and each was tried above.
    const table = portalEngagementRoutes({} as Parameters<typeof portalEngagementRoutes>[0]).map(
      (route) => `${route.method.toUpperCase()} /portal/api${route.path.replace(/:(\w+)/g, '{$1}')}`,
    );
    const paths = (await platform.get('/openapi.json')).body.paths;
    for (const entry of table) {
      const [method, path] = entry.split(' ') as [string, string];
      expect(paths[path]?.[method.toLowerCase()], entry).toBeDefined();
    }
    const tried = attempts.map(([method, path]) => `${method} /portal/api${path.replace(a, '{brandId}')}`);
    expect(new Set(tried)).toEqual(new Set(table));
  });
});
