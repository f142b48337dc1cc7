import { randomUUID } from 'node:crypto';
import { type CreatedBrand, signRequest } from '@pts/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitForMintsSettled } from '../../../test/chain-helpers.ts';
import { fundUser } from '../../../test/perk-helpers.ts';
import { startTestPlatform, type TestPlatform, type TestResponse } from '../../../test/platform.ts';
import { type PortalBrowser, portalMember } from '../../../test/portal-browser.ts';
import { agentTools } from '../agent-tools.ts';
import { createPerkViaAdmin, testPrincipal, toolCaller } from './tool-test-support.ts';

// One member, one balance (issue 34 §1, §2): a person who linked Discord and Telegram earns on both and
// redeems on one; every member-facing agent tool, /services/balance and the portal's member page then give
// the same balance, the same earned total and the same perks whichever identity is asked. And a member whose
// wallet holds pts no event earned (bought pts: a payment mints with no event) is told by recommendations,
// goals and find_deals what redeem_perk then does. Real platform: PGlite or PostgreSQL, anvil, the contracts.

const DAY = 86_400_000;
// Noon UTC today: near the chain's real time (permits carry a deadline from the clock).
const T0 = new Date(Math.floor(Date.now() / DAY) * DAY + DAY / 2);
const DISCORD = 'discord_3401@pts.example';
const TELEGRAM = 'telegram_3402@pts.example';
const BUYER = 'buyer@customer.example';

let platform: TestPlatform;
let brand: CreatedBrand;
let owner: PortalBrowser;
let seq = 0;
let buyerWallet = '';
const perks: Record<string, { perkId: number; uuid: string }> = {};
const tools = toolCaller(
  () => platform,
  () => agentTools(platform.services.agent.toolDeps),
);
const principal = () => testPrincipal([brand.brandId]);

/** A brand-signed request at the platform clock (distinct timestamps keep identical bodies distinct). */
async function signed(method: string, path: string, body?: unknown): Promise<TestResponse> {
  const raw = body === undefined ? '' : JSON.stringify(body);
  const timestamp = Math.floor(platform.clock.now().getTime() / 1000) - (seq++ % 250);
  const headers = signRequest({ securityKey: brand.securityKey, method, pathWithQuery: path, body: raw, timestamp });
  const response = await fetch(`${platform.url}${path}`, {
    method,
    headers: body === undefined ? headers : { ...headers, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: raw }),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined };
}

async function earn(identityKey: string): Promise<string> {
  platform.clock.advance(61_000); // past the duplicate window
  const res = await signed('POST', '/pts-api/manual-event', {
    brandId: brand.brandId,
    eventType: 'earn',
    userEmail: identityKey,
    domain: 'linked.example',
    metadata: { n: seq },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.walletAddress as string;
}

async function redeem(identityKey: string, perk: string) {
  const res = await signed('POST', '/services/perks/redeem', {
    brandId: brand.brandId,
    perkId: perks[perk]?.uuid,
    userIdentifier: identityKey,
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
}

/** Every member-facing answer about `identityKey`, reduced to what must agree across identities. */
async function everySurface(identityKey: string) {
  const params = { userId: identityKey, brandId: brand.brandId };
  const [balance, portfolio, persona, recommendations, goals, deals, services, page] = await Promise.all([
    tools.call('get_user_balance', { params }, principal()),
    tools.call('get_user_portfolio', { params: { userId: identityKey } }, principal()),
    tools.call('get_user_persona', { params: { userId: identityKey } }, principal()),
    tools.call('get_user_recommendations', { params: { userId: identityKey }, query: { limit: 20 } }, principal()),
    tools.call('get_user_goals', { params: { userId: identityKey } }, principal()),
    tools.call('find_deals', { query: { userId: identityKey, limit: 50 } }, principal()),
    signed('GET', `/services/balance/${brand.brandId}/${encodeURIComponent(identityKey)}`),
    owner.request('GET', `/brands/${brand.brandId}/loyalty-members/${encodeURIComponent(identityKey)}`),
  ]);
  expect(services.status, JSON.stringify(services.body)).toBe(200);
  expect(page.status, JSON.stringify(page.body)).toBe(200);
  const ids = (list: { perkId?: string; id?: number }[]) => list.map((p) => String(p.perkId ?? p.id)).sort();
  return {
    balance: {
      getUserBalance: balance.balance,
      portfolio: portfolio.balance,
      services: services.body.balance,
      portal: page.body.balance.onChain,
      recommendations: Number(recommendations.balance),
      goals: Number(goals.balance),
      findDeals: Number(deals.balance),
    },
    earned: {
      getUserBalance: balance.totalEarned,
      persona: Number(persona.behaviour.earned),
      portal: page.body.ledger.earned,
    },
    persona: { redemptions: persona.behaviour.redemptions, spent: persona.behaviour.spent },
    perksOffered: {
      recommendations: ids(recommendations.recommendations),
      goals: ids(goals.goals),
      findDeals: ids(deals.deals),
    },
  };
}

beforeAll(async () => {
  platform = await startTestPlatform({
    PTS_RATE_LIMIT_IP_PER_MINUTE: '100000',
    PTS_RATE_LIMIT_BRAND_PER_MINUTE: '100000',
    // Every answer computed on its call: this test is about what is computed, not how long it is kept.
    PTS_AGENT_ANSWER_MAX_AGE_SECONDS: '0',
  });
  platform.clock.set(new Date(T0.getTime() - 2 * DAY));
  brand = await platform.createBrand({
    name: 'Linked',
    domain: 'linked.example',
    rules: [{ eventType: 'earn', rewardAmount: 100, cooldownHours: 0, maxClaims: -1 }],
  });
  perks.once = await createPerkViaAdmin(platform, brand.brandId, { name: 'Once', cost: 50, maxPerUser: 1 });
  perks.mug = await createPerkViaAdmin(platform, brand.brandId, { name: 'Mug', cost: 300 });
  perks.trip = await createPerkViaAdmin(platform, brand.brandId, { name: 'Trip', cost: 900 });

  // Discord issues a code, Telegram confirms it: one account (Discord's), one wallet.
  const code = await signed('POST', '/services/link/code', { brandId: brand.brandId, userIdentifier: DISCORD });
  expect(code.status, JSON.stringify(code.body)).toBe(200);
  const linked = await signed('POST', '/services/link/confirm', {
    brandId: brand.brandId,
    userIdentifier: TELEGRAM,
    code: code.body.code,
  });
  expect(linked.status, JSON.stringify(linked.body)).toBe(200);
  // Two rewards on each platform (400 pts), then the once-per-member perk redeemed from Telegram (50 pts).
  await earn(DISCORD);
  await earn(TELEGRAM);
  await earn(DISCORD);
  await earn(TELEGRAM);
  // The buyer earns 100 pts, and buys 500 more: minted to the wallet with no event.
  buyerWallet = await earn(BUYER);
  await waitForMintsSettled(platform);
  await fundUser(platform, buyerWallet as `0x${string}`, 500n);
  platform.clock.set(T0);
  await redeem(TELEGRAM, 'once');
  platform.clock.set(new Date(T0.getTime() + 60_000));
  // Signed in now: a portal session lasts hours of the clock, which moved days above.
  owner = await portalMember(platform, brand.brandId, 'owner@linked.example', 'owner');
}, 180_000);

afterAll(async () => {
  await platform?.stop();
});

describe('a member who linked two platforms', () => {
  it('gets one balance, one earned total and one set of perks from every surface, whichever identity asks', async () => {
    const asDiscord = await everySurface(DISCORD);
    const asTelegram = await everySurface(TELEGRAM);
    const spendable = 400 - 50;
    for (const seen of [asDiscord, asTelegram]) {
      expect(seen.balance).toEqual({
        getUserBalance: spendable,
        portfolio: spendable,
        services: spendable,
        portal: spendable,
        recommendations: spendable,
        goals: spendable,
        findDeals: spendable,
      });
      expect(seen.earned).toEqual({ getUserBalance: 400, persona: 400, portal: 400 });
      expect(seen.persona).toEqual({ redemptions: 1, spent: '50' });
      // Once is held at its per-member maximum (redeemed from Telegram): offered to neither identity.
      const offered = [String(perks.mug?.perkId), String(perks.trip?.perkId)].sort();
      expect(seen.perksOffered).toEqual({ recommendations: offered, goals: offered, findDeals: offered });
    }
    expect(asTelegram).toEqual(asDiscord);
  });
});

describe('get_user_portfolio of a linked member', () => {
  /** The wallet of get_user_balance's figures and of get_user_portfolio, and both answers' figures at the brand. */
  async function walletFigures(identityKey: string) {
    const [balance, portfolio] = await Promise.all([
      tools.call('get_user_balance', { params: { userId: identityKey, brandId: brand.brandId } }, principal()),
      tools.call('get_user_portfolio', { params: { userId: identityKey } }, principal()),
    ]);
    const atBrand = portfolio.brands.find((entry: { brandId: string }) => entry.brandId === brand.brandId);
    const { figures } = balance;
    return {
      wallet: {
        getUserBalance: {
          walletAddress: figures.walletAddress,
          balance: figures.onChain,
          spendable: figures.spendable,
          pending: figures.pending,
        },
        portfolio: {
          walletAddress: portfolio.walletAddress,
          balance: portfolio.balance,
          spendable: portfolio.spendable,
          pending: portfolio.pending,
        },
      },
      figures: { getUserBalance: figures, portfolio: atBrand?.figures },
    };
  }

  it("answers get_user_balance's figures whichever identity asks: the account's wallet, never an identity row's", async () => {
    const params = { userId: DISCORD, brandId: brand.brandId };
    const accountWallet = (await tools.call('get_user_balance', { params }, principal())).walletAddress as string;
    for (const identityKey of [DISCORD, TELEGRAM]) {
      const { wallet } = await walletFigures(identityKey);
      expect(wallet.portfolio).toEqual(wallet.getUserBalance);
      expect(wallet.portfolio).toMatchObject({ walletAddress: accountWallet, balance: 350, spendable: 350 });
    }
    // An identity row that names another wallet (written apart from the link: by hand, an old import): a member's
    // figures are the account's (modules/ledger/member-figures.ts), so the portfolio must not read the row's.
    const row = () => platform.deps.db.updateTable('users').where('email', '=', TELEGRAM);
    await row().set({ wallet_address: buyerWallet }).execute();
    try {
      const { wallet } = await walletFigures(TELEGRAM);
      expect(wallet.portfolio).toEqual(wallet.getUserBalance);
      expect(wallet.portfolio).toMatchObject({ walletAddress: accountWallet, balance: 350 });
    } finally {
      await row().set({ wallet_address: accountWallet }).execute();
    }
    // Each brand of the portfolio carries the figures get_user_balance answers there, labelled the same.
    const { figures } = await walletFigures(TELEGRAM);
    expect(figures.portfolio).toEqual(figures.getUserBalance);
  });
});

describe('a member whose wallet holds bought pts', () => {
  it('is told by recommendations, goals and find_deals what redeem_perk then does', async () => {
    const params = { userId: BUYER };
    const services = await signed('GET', `/services/balance/${brand.brandId}/${encodeURIComponent(BUYER)}`);
    expect(services.body.balance).toBe(600);
    const [recommendations, goals, deals] = await Promise.all([
      tools.call('get_user_recommendations', { params, query: { limit: 20 } }, principal()),
      tools.call('get_user_goals', { params }, principal()),
      tools.call('find_deals', { query: { userId: BUYER, limit: 50 } }, principal()),
    ]);
    const mug = String(perks.mug?.perkId);
    const byId = (list: { perkId?: string; id?: number }[]) => list.find((p) => String(p.perkId ?? p.id) === mug);
    expect(recommendations.balance).toBe('600');
    expect(byId(recommendations.recommendations)).toMatchObject({ affordable: true });
    expect(goals.balance).toBe('600');
    expect(byId(goals.goals)).toMatchObject({ missing: '0', progressPercent: 100 });
    expect(deals.balance).toBe('600');
    expect(byId(deals.deals)).toMatchObject({ affordable: true, missingPts: '0' });
    // redeem_perk, judging with the same balance, pays the perk recommendations called affordable.
    const redeemed = await tools.call(
      'redeem_perk',
      { body: { perkId: perks.mug?.uuid, userId: BUYER, brandId: brand.brandId } },
      principal(),
    );
    expect(redeemed).toMatchObject({ success: true });
  });
});

describe('a member with a reward whose mint failed', () => {
  it('is not offered what redeem_perk refuses: the failed reward is in no balance either judges with', async () => {
    // An accepted 1000-pts reward whose mint failed for good: earned, never on the wallet.
    const eventId = randomUUID();
    const at = platform.clock.now();
    await platform.deps.db
      .insertInto('events')
      .values({
        id: eventId,
        brand_id: brand.brandId,
        event_type: 'earn',
        user_email: BUYER,
        status: 'accepted',
        metadata: JSON.stringify({}),
        reward_amount: 1000,
        created_at: at,
        sent_by: 'brand',
      })
      .execute();
    await platform.deps.db
      .insertInto('reward_mints')
      .values({
        id: randomUUID(),
        event_id: eventId,
        brand_id: brand.brandId,
        wallet_address: buyerWallet,
        amount: 1000,
        status: 'failed',
        chain_tx_id: null,
        attempts: 5,
        last_error: 'reverted',
        created_at: at,
        updated_at: at,
      })
      .execute();
    // 600 on the wallet − the Mug (300) = 300 spendable; the Trip costs 900.
    const trip = String(perks.trip?.perkId);
    const recommendations = await tools.call(
      'get_user_recommendations',
      { params: { userId: BUYER }, query: { limit: 20 } },
      principal(),
    );
    expect(recommendations.balance).toBe('300');
    expect(recommendations.recommendations.find((p: { perkId: string }) => p.perkId === trip)).toMatchObject({
      affordable: false,
      reason: expect.stringContaining('600 pts missing'),
    });
    await expect(
      tools.invoke(
        'redeem_perk',
        { body: { perkId: perks.trip?.uuid, userId: BUYER, brandId: brand.brandId } },
        principal(),
      ),
    ).rejects.toMatchObject({ code: 'INSUFFICIENT_BALANCE', details: expect.objectContaining({ missing: 600 }) });
  });
});
