import { type CoreClient, type CreatedBrand, createCoreClient, signRequest } from '@pts/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../../../test/platform.ts';
import { type PortalBrowser, portalMember } from '../../../test/portal-browser.ts';
import type { AgentPrincipal, AgentTool } from '../../agent/agent-tool.ts';
import { actionsTools } from '../../agent/tools/actions.tools.ts';
import { analyticsTools } from '../../agent/tools/analytics.tools.ts';
import { testPrincipal, toolCaller } from '../../agent/tools/tool-test-support.ts';
import { readBrandAnalytics } from '../analytics/brand-analytics.ts';

// One member through a mint's life — accepted and sent, mined, confirmed — then a refused event, then a perk
// redemption reserved but not yet mined: every surface that speaks of what the member
// earned or may spend tells the same story at every step (docs/ledger.md). The
// receipt tracker is held (it polls once an hour here and is driven by hand) and anvil mines only when told,
// so each step is a state the platform really passes through.

const REWARD = 70;
/** The perk the member redeems at the end: its cost is reserved while the claim is in flight. */
const PERK_COST = 30;
const MEMBER = 'lifecycle.member@example.com';

let platform: TestPlatform;
let brand: CreatedBrand;
let tools: AgentTool[];
let key: AgentPrincipal;
/** The portal's owner (the member page) and the core client the bots' /balance calls. */
let owner: PortalBrowser;
let core: CoreClient;
const caller = toolCaller(
  () => platform,
  () => tools,
);

async function rpc(method: string, params: unknown[] = []): Promise<unknown> {
  const response = await fetch(platform.deps.chain.rpcUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  const body = (await response.json()) as { result?: unknown; error?: { message: string } };
  if (body.error) throw new Error(`${method}: ${body.error.message}`);
  return body.result;
}

const signedGet = (path: string) => {
  // One signature per request: the same path signed in the same second would be a replay.
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
};

const purchase = () =>
  platform.signedPost(
    '/pts-api/manual-event',
    { brandId: brand.brandId, eventType: 'purchase', userEmail: MEMBER, domain: 'life.example.com' },
    brand.securityKey,
  );

async function mintStatus(): Promise<string> {
  const row = await platform.deps.db
    .selectFrom('reward_mints')
    .innerJoin('events', 'events.id', 'reward_mints.event_id')
    .select('reward_mints.status')
    .where('events.user_email', '=', MEMBER)
    .executeTakeFirstOrThrow();
  return row.status;
}

async function waitForMintStatus(wanted: string): Promise<void> {
  const deadline = Date.now() + 15_000;
  while ((await mintStatus()) !== wanted) {
    if (Date.now() > deadline) throw new Error(`mint still ${await mintStatus()}, wanted ${wanted}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function redemptionStatus(id: string): Promise<string> {
  const row = await platform.deps.db
    .selectFrom('perk_redemptions')
    .select('status')
    .where('id', '=', id)
    .executeTakeFirstOrThrow();
  return row.status;
}

/** What every surface says of the member now. */
async function surfaces() {
  const balance = await signedGet(`/services/balance/${brand.brandId}/${encodeURIComponent(MEMBER)}`);
  expect(balance.status, JSON.stringify(balance.body)).toBe(200);
  const board = await signedGet(
    `/services/leaderboard/${brand.brandId}?metric=pts_earned&period=all_time&user=${encodeURIComponent(MEMBER)}`,
  );
  expect(board.status, JSON.stringify(board.body)).toBe(200);
  const params = { userId: MEMBER, brandId: brand.brandId };
  const now = platform.clock.now();
  const [agentBalance, stats, portfolio, analytics, dashboard, page, viaClient] = await Promise.all([
    caller.call('get_user_balance', { params }, key),
    caller.call('get_user_stats', { params }, key),
    caller.call('get_user_portfolio', { params: { userId: MEMBER } }, key),
    caller.call('get_brand_analytics', { params: { brandId: brand.brandId }, query: { period: '7d' } }),
    readBrandAnalytics(platform.deps, {
      brandId: brand.brandId,
      from: new Date(now.getTime() - 86_400_000),
      to: now,
    }),
    owner.request('GET', `/brands/${brand.brandId}/loyalty-members/${encodeURIComponent(MEMBER)}`),
    core.balance(MEMBER),
  ]);
  expect(page.status, JSON.stringify(page.body)).toBe(200);
  return {
    wallet: { balance: balance.body.balance, pending: balance.body.pending },
    // Side by side: every surface that shows the member's balance or earnings, asked at one moment.
    figures: {
      services: balance.body.figures,
      bots: viaClient.figures,
      portal: page.body.figures,
      getUserBalance: agentBalance.figures,
      getUserStats: stats.figures,
    },
    leaderboard: board.body.me?.value ?? 0,
    agentBalance,
    stats: stats.earnings,
    portfolio: portfolio.brands[0],
    analytics: analytics.current,
    dashboard,
  };
}

/**
 * The one set of definitions (docs/ledger.md): earned = confirmed + pending on every member tool; the
 * leaderboard ranks confirmed; the wallet holds on chain what is not pending; analytics issue what was earned.
 */
function expectAgreement(
  seen: Awaited<ReturnType<typeof surfaces>>,
  step: { confirmed: number; pending: number; reserved?: number },
) {
  const reserved = step.reserved ?? 0;
  const earned = { totalEarned: REWARD, confirmedEarned: step.confirmed, pendingEarned: step.pending };
  // One read, one set of labels: the same numbers under the same names on every surface.
  const figures = {
    walletAddress: seen.agentBalance.walletAddress,
    counts: 'wallet-on-chain+ledger',
    onChain: seen.wallet.balance,
    pending: seen.wallet.pending,
    reserved,
    spendable: seen.wallet.balance - reserved,
    earned: { total: REWARD, confirmed: step.confirmed, pending: step.pending, unminted: 0, reversed: 0 },
    debt: 0,
  };
  expect(seen.figures).toEqual({
    services: figures,
    bots: figures,
    portal: figures,
    getUserBalance: figures,
    getUserStats: figures,
  });
  expect(seen.agentBalance).toMatchObject({ ...earned, balance: seen.wallet.balance, pending: seen.wallet.pending });
  expect(seen.stats).toMatchObject(earned);
  expect(seen.portfolio).toMatchObject({ brandId: brand.brandId, ...earned });
  expect(seen.leaderboard).toBe(step.confirmed);
  // One token, one brand, nothing spent yet: the wallet and what is still on its way make up what was earned.
  expect(seen.wallet.balance + seen.wallet.pending).toBe(REWARD);
  expect(seen.analytics).toMatchObject({ acceptedEvents: 1, members: 1, ptsIssued: String(REWARD) });
  expect(seen.dashboard.ptsIssued).toBe(String(REWARD));
  expect(seen.dashboard.members).toMatchObject({ total: 1, inWindow: 1, active: { day: 1, week: 1, month: 1 } });
  expect(seen.dashboard.events.accepted).toBe(1);
  expect(seen.dashboard.events.refused).toBe(seen.analytics.rejectedEvents);
}

beforeAll(async () => {
  platform = await startTestPlatform({
    PTS_RATE_LIMIT_IP_PER_MINUTE: '10000',
    // The receipt tracker runs when the test says so, and an event answers without waiting for its mint.
    PTS_RECEIPT_POLL_MS: '3600000',
    PTS_MINT_WAIT_MS: '0',
    PTS_AGENT_ANSWER_MAX_AGE_SECONDS: '0',
    // A perk's claim answers 202 (in flight) soon when anvil does not mine it.
    PTS_RELAYER_WAIT_MS: '200',
  });
  brand = await platform.createBrand({
    name: 'life',
    domain: 'life.example.com',
    rules: [{ eventType: 'purchase', rewardAmount: REWARD, cooldownHours: 24, maxClaims: -1 }],
  });
  tools = [...actionsTools(platform.services.agent.toolDeps), ...analyticsTools(platform.services.agent.toolDeps)];
  key = testPrincipal([brand.brandId]);
  owner = await portalMember(platform, brand.brandId, 'owner@life.example.com', 'owner');
  core = createCoreClient({
    baseUrl: platform.url,
    brandId: brand.brandId,
    securityKey: brand.securityKey,
    clock: platform.clock,
  });
}, 120_000);

afterAll(async () => {
  await rpc('evm_setAutomine', [true]).catch(() => undefined);
  await platform?.stop();
});

describe('a member through a mint’s life', () => {
  it('every surface agrees at every step', async () => {
    await rpc('evm_setAutomine', [false]);
    const accepted = await purchase();
    expect(accepted.status, JSON.stringify(accepted.body)).toBe(200);
    expect(['pending', 'submitted']).toContain(await mintStatus());

    // Accepted, its mint queued or sent: earned, nothing on chain, nothing on the board.
    let seen = await surfaces();
    expect(seen.wallet).toEqual({ balance: 0, pending: REWARD });
    expectAgreement(seen, { confirmed: 0, pending: REWARD });

    // Submitted: the transaction is out, not mined.
    await waitForMintStatus('submitted');
    seen = await surfaces();
    expect(seen.wallet).toEqual({ balance: 0, pending: REWARD });
    expectAgreement(seen, { confirmed: 0, pending: REWARD });

    // Mined, the receipt not yet read: the wallet holds it (counted once), the ledger still calls it pending
    // and the board has not counted it — each by its own definition, and the sums still close.
    await rpc('evm_mine');
    seen = await surfaces();
    expect(await mintStatus()).toBe('submitted');
    expect(seen.wallet).toEqual({ balance: REWARD, pending: 0 });
    expectAgreement(seen, { confirmed: 0, pending: REWARD });

    // Confirmed: the tracker reads the receipt.
    await platform.deps.minter.processPending();
    expect(await mintStatus()).toBe('confirmed');
    seen = await surfaces();
    expect(seen.wallet).toEqual({ balance: REWARD, pending: 0 });
    expectAgreement(seen, { confirmed: REWARD, pending: 0 });

    // A refused event (the rule's 24 h cooldown) changes no figure of the member; analytics count it refused.
    await rpc('evm_setAutomine', [true]);
    platform.clock.advance(60_000);
    const refused = await purchase();
    expect(refused.status, JSON.stringify(refused.body)).toBe(429);
    seen = await surfaces();
    expect(seen.wallet).toEqual({ balance: REWARD, pending: 0 });
    expectAgreement(seen, { confirmed: REWARD, pending: 0 });
    expect(seen.analytics.rejectedEvents).toBe(1);
    expect(seen.dashboard.events.refusedByReason).toEqual([{ reason: 'COOLDOWN_ACTIVE', count: 1 }]);
    expect(seen.stats.events).toBe(1);

    // A perk redemption in flight: its claim is sent, not mined. The cost is reserved, so what the member may
    // spend drops at once on every surface; the wallet on chain, what was earned and the board do not move.
    const perk = await platform.post(
      '/admin/perks',
      { brandId: brand.brandId, name: 'Lifecycle mug', cost: PERK_COST },
      { authorization: `Bearer ${platform.deps.adminToken}` },
    );
    expect(perk.status, JSON.stringify(perk.body)).toBe(201);
    await rpc('evm_setAutomine', [false]);
    platform.clock.advance(1_000);
    const redeemed = await platform.signedPost(
      '/services/perks/redeem',
      { brandId: brand.brandId, perkId: perk.body.perk.uuid, userIdentifier: MEMBER },
      brand.securityKey,
    );
    expect(redeemed.status, JSON.stringify(redeemed.body)).toBe(202);
    expect(await redemptionStatus(redeemed.body.redemptionId)).toBe('pending');
    seen = await surfaces();
    expect(seen.wallet).toEqual({ balance: REWARD, pending: 0 });
    expect(seen.figures.services).toMatchObject({ reserved: PERK_COST, spendable: REWARD - PERK_COST });
    expectAgreement(seen, { confirmed: REWARD, pending: 0, reserved: PERK_COST });
    // (Its settling is the relayer's, which this test holds: redemption.platform.test.ts follows a 202 to the end.)
  }, 120_000);
});
