import { type CreatedBrand, signRequest } from '@pts/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitForMintsSettled } from '../../../test/chain-helpers.ts';
import { startTestPlatform, type TestPlatform } from '../../../test/platform.ts';

// Referrals (issue 36 §2, docs/referrals.md) through the real app: the admin API's program and its 400s, the
// brand-signed code, each fraud rule attempted as an attacker would and refused with its reason, the payment
// once per referee (20 parallel qualifying events), the referrer's cap under parallel referees, the reversal
// of the qualifying purchase, and the stats. Runs on PGlite, and on PostgreSQL with PTS_TEST_DB=postgres.

const ADMIN_TOKEN = 'referrals-admin-token-0123456789abcdef';
const SERVICE_DOMAIN = 'pts.example';
let platform: TestPlatform;
let n = 0;

async function admin(method: 'PUT' | 'GET', path: string, body?: unknown) {
  const response = await fetch(`${platform.url}/admin${path}`, {
    method,
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON bodies
  const answer: any = await response.json();
  return { status: response.status, body: answer };
}

function signedGet(brand: CreatedBrand, path: string) {
  platform.clock.advance(1000);
  return platform.get(
    path,
    signRequest({
      securityKey: brand.securityKey,
      method: 'GET',
      pathWithQuery: path,
      body: '',
      timestamp: Math.floor(platform.clock.now().getTime() / 1000),
    }),
  );
}

const PROGRAM = { qualifyingEventType: 'purchase', minValue: '25.00', referrerReward: 500, refereeReward: 200 };

/** A brand with a sign-up rule (10 pts) and a purchase rule (1 pt per $1), and a referral program. */
async function newBrand(program: Record<string, unknown> = PROGRAM): Promise<CreatedBrand> {
  const brand = await platform.createBrand({
    name: `Referral Shop ${++n}`,
    domain: `referrals${n}.example.com`,
    rules: [{ eventType: 'signup', rewardAmount: 10, cooldownHours: 0, maxClaims: 1 }],
  });
  const rule = await admin('PUT', `/brands/${brand.brandId}/rules/purchase`, {
    rate: { pts: 1, per: '1.00', currency: 'USD' },
    cooldownHours: 0,
    maxClaims: -1,
  });
  expect(rule.status, JSON.stringify(rule.body)).toBe(200);
  const set = await admin('PUT', `/brands/${brand.brandId}/referrals`, program);
  expect(set.status, JSON.stringify(set.body)).toBe(200);
  return brand;
}

async function codeOf(brand: CreatedBrand, member: string): Promise<string> {
  const answer = await signedGet(brand, `/services/referral/${brand.brandId}/${encodeURIComponent(member)}`);
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  return answer.body.code as string;
}

function event(brand: CreatedBrand, body: Record<string, unknown>) {
  return platform.signedPost(
    '/pts-api/manual-event',
    { brandId: brand.brandId, externalId: `ext-${++n}`, ...body },
    brand.securityKey,
  );
}

const signup = (brand: CreatedBrand, userEmail: string, extra: Record<string, unknown> = {}) =>
  event(brand, { eventType: 'signup', userEmail, ...extra });
const purchase = (brand: CreatedBrand, userEmail: string, amount: string, extra: Record<string, unknown> = {}) =>
  event(brand, { eventType: 'purchase', userEmail, value: { amount, currency: 'USD' }, ...extra });

async function rewards(brand: CreatedBrand, eventType: 'referral_referrer' | 'referral_referee') {
  const rows = await platform.deps.db
    .selectFrom('events')
    .select(['user_email', 'reward_amount', 'id'])
    .where('brand_id', '=', brand.brandId)
    .where('event_type', '=', eventType)
    .where('status', '=', 'accepted')
    .orderBy('user_email')
    .execute();
  return rows.map((row) => ({ member: row.user_email, pts: Number(row.reward_amount), id: row.id }));
}

beforeAll(async () => {
  platform = await startTestPlatform({
    PTS_ADMIN_TOKEN: ADMIN_TOKEN,
    PTS_RATE_LIMIT_IP_PER_MINUTE: '100000',
    PTS_SERVICE_DOMAIN: SERVICE_DOMAIN,
  });
}, 120_000);

afterAll(async () => {
  await platform?.stop();
});

describe('the referral program on the admin API', () => {
  it('refuses a program a brand must fix with a 400 that says what, and keeps an audited one', async () => {
    const brand = await newBrand();
    const put = (body: unknown) => admin('PUT', `/brands/${brand.brandId}/referrals`, body);
    const bad: [unknown, RegExp][] = [
      [{ ...PROGRAM, qualifyingEventType: 'first_order' }, /first_order is not an active rule of this brand/],
      [{ ...PROGRAM, qualifyingEventType: 'bad type!' }, /letters, digits or underscores/],
      [{ ...PROGRAM, minValue: '25.001' }, /more decimals than USD allows/],
      [{ ...PROGRAM, minValue: '-5' }, /decimal string/],
      [{ ...PROGRAM, referrerReward: -1 }, /must not be negative/],
      [{ ...PROGRAM, refereeReward: 1.5 }, /whole number of pts/],
      [{ ...PROGRAM, capPeriodDays: 30 }, /capPeriodDays needs capPerReferrer/],
      [{ ...PROGRAM, capPerReferrer: 0 }, /at least 1/],
      [{ referrerReward: 1, refereeReward: 1 }, /qualifyingEventType/],
    ];
    for (const [body, message] of bad) {
      const answer = await put(body);
      expect(answer.status, JSON.stringify(answer.body)).toBe(400);
      expect(JSON.stringify(answer.body)).toMatch(message);
    }
    const ok = await put({ ...PROGRAM, capPerReferrer: 5, capPeriodDays: 30 });
    expect(ok.body).toMatchObject({
      currency: 'USD',
      program: { qualifyingEventType: 'purchase', minValue: '25.00', capPerReferrer: 5, capPeriodDays: 30 },
    });
    expect((await admin('GET', `/brands/${brand.brandId}/referrals`)).body).toEqual(ok.body);
    expect((await admin('GET', '/brands/0x000000000000000000000000000000000000dead/referrals')).status).toBe(404);
    const audit = await platform.deps.db
      .selectFrom('audit_log')
      .select('action')
      .where('subject', '=', brand.brandId)
      .where('action', '=', 'referrals.set')
      .execute();
    expect(audit).toHaveLength(2);
  });
});

describe('a member’s code', () => {
  it('is brand-signed, one per member and brand, with the brand’s link', async () => {
    const brand = await newBrand();
    const path = `/services/referral/${brand.brandId}/ann%40example.com`;
    const first = await signedGet(brand, path);
    expect(first.status).toBe(200);
    expect(first.body.code).toMatch(/^[0-9A-HJKMNP-TV-Z]{8}$/);
    expect(first.body.link).toBe(`https://referrals${n}.example.com/?ref=${first.body.code}`);
    expect((await signedGet(brand, path)).body.code).toBe(first.body.code);
    const unsigned = await platform.get(path);
    expect(unsigned.status).toBe(401);
    const other = await newBrand();
    expect(await codeOf(other, 'ann@example.com')).not.toBe(first.body.code);
  });

  it('answers a malformed referralCode on an event with a 400 saying what a code is', async () => {
    const brand = await newBrand();
    const answer = await signup(brand, 'typo@example.com', { referralCode: 'not a code!' });
    expect(answer.status).toBe(400);
    expect(JSON.stringify(answer.body)).toMatch(/referralCode.*8 letters and digits/);
  });
});

describe('paying a referral', () => {
  it('pays both sides once the referee’s first purchase reaches the minimum, and announces referral.paid', async () => {
    const brand = await newBrand();
    await platform.deps.db
      .insertInto('webhook_endpoints')
      .values({
        brand_id: brand.brandId,
        url: 'https://hooks.example.com/pts',
        secret_encrypted: platform.deps.secrets.encrypt('whsec_test'),
        active: true,
      })
      .execute();
    const code = await codeOf(brand, 'alice@example.com');
    const joined = await signup(brand, 'bob@example.com', { referralCode: code.toLowerCase() });
    expect(joined.status, JSON.stringify(joined.body)).toBe(200);
    expect(joined.body.referral).toMatchObject({ status: 'attached' });
    const small = await purchase(brand, 'bob@example.com', '24.99');
    expect(small.body.referral).toBeUndefined();
    expect(await rewards(brand, 'referral_referrer')).toEqual([]);
    const big = await purchase(brand, 'bob@example.com', '25.00');
    expect(big.body.referral).toMatchObject({ status: 'paid' });
    await purchase(brand, 'bob@example.com', '80.00');
    expect(await rewards(brand, 'referral_referrer')).toMatchObject([{ member: 'alice@example.com', pts: 500 }]);
    expect(await rewards(brand, 'referral_referee')).toMatchObject([{ member: 'bob@example.com', pts: 200 }]);
    const hooks = await platform.deps.db
      .selectFrom('webhook_deliveries')
      .select('body')
      .where('type', '=', 'referral.paid')
      .where('brand_id', '=', brand.brandId)
      .execute();
    expect(hooks.map((h) => JSON.parse(h.body).data)).toEqual([
      expect.objectContaining({ referrer: 'alice@example.com', referee: 'bob@example.com', code, referrerReward: 500 }),
    ]);
    expect((await admin('GET', `/brands/${brand.brandId}/referrals/stats`)).body).toMatchObject({
      invites: 1,
      attached: 0,
      qualified: 1,
      paid: 1,
      reversed: 0,
      pts: { referrers: 500, referees: 200 },
      refused: {},
    });
  });

  it('pays on account creation when that is the qualifying event, and through bulk-events items', async () => {
    const brand = await newBrand({ qualifyingEventType: 'signup', referrerReward: 50, refereeReward: 25 });
    const code = await codeOf(brand, 'host@example.com');
    const bulk = await platform.signedPost(
      '/pts-api/bulk-events',
      { events: [{ brandId: brand.brandId, eventType: 'signup', userEmail: 'guest@example.com', referralCode: code }] },
      brand.securityKey,
    );
    expect(bulk.status, JSON.stringify(bulk.body)).toBe(200);
    expect(bulk.body.results[0].referral).toMatchObject({ status: 'paid' });
    expect(await rewards(brand, 'referral_referrer')).toMatchObject([{ member: 'host@example.com', pts: 50 }]);
    expect(await rewards(brand, 'referral_referee')).toMatchObject([{ member: 'guest@example.com', pts: 25 }]);
  });

  it('pays once when 20 qualifying purchases of one referee arrive at once', async () => {
    const brand = await newBrand();
    const code = await codeOf(brand, 'carol@example.com');
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => purchase(brand, 'dave@example.com', '30.00', { referralCode: code })),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(20).fill(200));
    expect(await rewards(brand, 'referral_referrer')).toMatchObject([{ member: 'carol@example.com', pts: 500 }]);
    expect(await rewards(brand, 'referral_referee')).toMatchObject([{ member: 'dave@example.com', pts: 200 }]);
    expect(answers.filter((a) => a.body.referral?.status === 'paid').length).toBe(1);
    expect((await admin('GET', `/brands/${brand.brandId}/referrals/stats`)).body).toMatchObject({
      paid: 1,
      refused: {},
    });
  });

  it('holds the referrer’s cap exactly under parallel referees, and pays again in the next period', async () => {
    const brand = await newBrand({ ...PROGRAM, capPerReferrer: 3, capPeriodDays: 30 });
    const code = await codeOf(brand, 'erin@example.com');
    const referees = Array.from({ length: 8 }, (_, i) => `friend${i}-${n}@example.com`);
    for (const referee of referees) {
      expect((await signup(brand, referee, { referralCode: code })).body.referral).toMatchObject({
        status: 'attached',
      });
    }
    const answers = await Promise.all(referees.map((referee) => purchase(brand, referee, '40.00')));
    expect(answers.map((a) => a.status)).toEqual(Array(8).fill(200));
    expect((await rewards(brand, 'referral_referrer')).length).toBe(3);
    expect((await rewards(brand, 'referral_referee')).length).toBe(3);
    expect(answers.filter((a) => a.body.referral?.reason === 'referrer_cap').length).toBe(5);
    platform.clock.advance(31 * 86_400_000);
    const late = 'late-friend@example.com';
    await signup(brand, late, { referralCode: code });
    expect((await purchase(brand, late, '40.00')).body.referral).toMatchObject({ status: 'paid' });
    expect((await rewards(brand, 'referral_referrer')).length).toBe(4);
    expect((await admin('GET', `/brands/${brand.brandId}/referrals/stats`)).body).toMatchObject({
      invites: 9,
      qualified: 9,
      paid: 4,
      refused: { referrer_cap: 5 },
    });
  });
});

describe('fraud rules, attempted as an attacker would', () => {
  it('refuses self-referral by the same account, a linked identity, the same wallet and the same mailbox', async () => {
    const brand = await newBrand();
    const refused = async (userEmail: string, code: string, extra: Record<string, unknown> = {}) => {
      const answer = await signup(brand, userEmail, { referralCode: code, ...extra });
      expect(answer.status, JSON.stringify(answer.body)).toBe(200); // the sign-up itself still counts
      return answer.body.referral;
    };
    // The same account: a member uses their own code on their first event.
    const own = await codeOf(brand, 'mallory@example.com');
    expect(await refused('mallory@example.com', own)).toMatchObject({
      status: 'refused',
      reason: 'self_referral_account',
    });
    // A linked identity: the member's Discord identity, linked to their email, signs up with the email's code.
    const linkedCode = await codeOf(brand, 'trent@example.com');
    const discord = `discord_31337@${SERVICE_DOMAIN}`;
    const link = await platform.signedPost(
      '/services/link/email',
      { brandId: brand.brandId, userIdentifier: discord, email: 'trent@example.com' },
      brand.securityKey,
    );
    expect(link.status, JSON.stringify(link.body)).toBe(200);
    expect(await refused(discord, linkedCode)).toMatchObject({ reason: 'self_referral_linked_identity' });
    // The same wallet: a second e-mail whose site account is the referrer's wallet.
    const walletOwner = 'wendy@example.com';
    const walletCode = await codeOf(brand, walletOwner);
    const earned = await event(brand, { eventType: 'signup', userEmail: walletOwner });
    const wallet = earned.body.walletAddress as string;
    expect(await refused('wendy.alt@example.com', walletCode, { userIdentifier: wallet })).toMatchObject({
      reason: 'self_referral_wallet',
    });
    // The same mailbox: Gmail ignores dots and +tags, googlemail.com is gmail.com.
    const gmailCode = await codeOf(brand, 'eve.doe@gmail.com');
    expect(await refused('e.v.e.doe+promo@googlemail.com', gmailCode)).toMatchObject({
      reason: 'self_referral_mailbox',
    });
    // Elsewhere only +tags are ignored: a +tag is the same mailbox, a dot is another person.
    const outlookCode = await codeOf(brand, 'eve.doe@outlook.com');
    expect(await refused('eve.doe+2@outlook.com', outlookCode)).toMatchObject({ reason: 'self_referral_mailbox' });
    expect(await refused('evedoe@outlook.com', outlookCode)).toMatchObject({ status: 'attached' });
    // No payment for any of them.
    for (const member of ['mallory@example.com', discord, 'wendy.alt@example.com', 'e.v.e.doe+promo@googlemail.com']) {
      await purchase(brand, member, '50.00');
    }
    expect(await rewards(brand, 'referral_referrer')).toEqual([]);
    expect((await admin('GET', `/brands/${brand.brandId}/referrals/stats`)).body.refused).toEqual({
      self_referral_account: 1,
      self_referral_linked_identity: 1,
      self_referral_wallet: 1,
      self_referral_mailbox: 2,
    });
  });

  it('refuses a referee who is not new to the brand, an unknown code, and a second referrer', async () => {
    const brand = await newBrand();
    const code = await codeOf(brand, 'frank@example.com');
    // An existing member (already a customer here) tries a friend's code on a later purchase.
    await signup(brand, 'regular@example.com');
    const late = await purchase(brand, 'regular@example.com', '60.00', { referralCode: code });
    expect(late.body.referral).toMatchObject({ status: 'refused', reason: 'referee_not_new' });
    // New elsewhere does not make one new here: a member of another brand is new to this one.
    const other = await newBrand();
    await signup(other, 'visitor@example.com');
    expect((await signup(brand, 'visitor@example.com', { referralCode: code })).body.referral).toMatchObject({
      status: 'attached',
    });
    // A well-formed code nobody has.
    expect((await signup(brand, 'guess@example.com', { referralCode: 'ZZZZZZZZ' })).body.referral).toMatchObject({
      reason: 'unknown_code',
    });
    // A referee already attached to one referrer cannot switch to another.
    const second = await codeOf(brand, 'grace@example.com');
    expect(
      (await purchase(brand, 'visitor@example.com', '10.00', { referralCode: second })).body.referral,
    ).toMatchObject({ reason: 'already_referred' });
    await purchase(brand, 'regular@example.com', '60.00');
    await purchase(brand, 'visitor@example.com', '60.00');
    expect(await rewards(brand, 'referral_referrer')).toMatchObject([{ member: 'frank@example.com' }]);
    expect(await rewards(brand, 'referral_referee')).toMatchObject([{ member: 'visitor@example.com' }]);
    expect((await admin('GET', `/brands/${brand.brandId}/referrals/stats`)).body.refused).toEqual({
      referee_not_new: 1,
      unknown_code: 1,
      already_referred: 1,
    });
  });
});

describe('reversing the qualifying purchase', () => {
  it('reverses both referral rewards when the purchase is refunded below the minimum, not before', async () => {
    const brand = await newBrand();
    const code = await codeOf(brand, 'henry@example.com');
    await signup(brand, 'ivy@example.com', { referralCode: code });
    const bought = await purchase(brand, 'ivy@example.com', '40.00');
    expect(bought.body.referral).toMatchObject({ status: 'paid' });
    await waitForMintsSettled(platform);
    const refund = (reversalId: string, amount?: string) =>
      platform.signedPost(
        '/pts-api/reversals',
        {
          brandId: brand.brandId,
          reversalId,
          eventId: bought.body.eventId,
          ...(amount ? { value: { amount, currency: 'USD' } } : {}),
        },
        brand.securityKey,
      );
    const taken = async () =>
      platform.deps.db
        .selectFrom('reward_reversals')
        .select(['event_id', 'pts'])
        .where('brand_id', '=', brand.brandId)
        .where('event_id', 'in', [
          ...(await rewards(brand, 'referral_referrer')).map((r) => r.id),
          ...(await rewards(brand, 'referral_referee')).map((r) => r.id),
        ])
        .execute();
    // $10 back: $30 is left, still above the $25 minimum.
    expect((await refund('refund-1', '10.00')).status).toBe(200);
    expect(await taken()).toEqual([]);
    // $10 more: $20 is left, under the minimum: both rewards are taken back in full.
    expect((await refund('refund-2', '10.00')).status).toBe(200);
    expect((await taken()).map((r) => Number(r.pts)).sort((a, b) => a - b)).toEqual([200, 500]);
    // A further refund reverses nothing twice.
    expect((await refund('refund-3', '5.00')).status).toBe(200);
    expect(await taken()).toHaveLength(2);
    expect((await admin('GET', `/brands/${brand.brandId}/referrals/stats`)).body).toMatchObject({
      paid: 1,
      reversed: 1,
      pts: { referrers: 0, referees: 0 },
    });
  });

  it('reverses both rewards when the whole purchase is reversed', async () => {
    const brand = await newBrand({ qualifyingEventType: 'purchase', referrerReward: 70, refereeReward: 30 });
    const code = await codeOf(brand, 'jack@example.com');
    const bought = await purchase(brand, 'kim@example.com', '5.00', { referralCode: code });
    expect(bought.body.referral).toMatchObject({ status: 'paid' });
    await waitForMintsSettled(platform);
    const whole = await platform.signedPost(
      '/pts-api/reversals',
      { brandId: brand.brandId, reversalId: 'chargeback-1', eventId: bought.body.eventId },
      brand.securityKey,
    );
    expect(whole.status, JSON.stringify(whole.body)).toBe(200);
    const reversed = await platform.deps.db
      .selectFrom('reward_reversals')
      .innerJoin('events', 'events.id', 'reward_reversals.event_id')
      .select(['events.event_type', 'reward_reversals.pts'])
      .where('reward_reversals.brand_id', '=', brand.brandId)
      .where('events.event_type', 'like', 'referral_%')
      .orderBy('events.event_type')
      .execute();
    expect(reversed.map((r) => [r.event_type, Number(r.pts)])).toEqual([
      ['referral_referee', 30],
      ['referral_referrer', 70],
    ]);
  });
});
