import { type CreatedBrand, signRequest } from '@pts/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tokenBalance, waitForMintsSettled } from '../../../test/chain-helpers.ts';
import { startTestPlatform, type TestPlatform } from '../../../test/platform.ts';

let platform: TestPlatform;
let brand: CreatedBrand;

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

/** A first purchase by `email`, its 70 minted and confirmed; returns the wallet. */
async function earnMinted(email: string): Promise<string> {
  const event = await platform.post('/pts-api/manual-event', {
    brandId: brand.brandId,
    eventType: 'first_purchase',
    userEmail: email,
    domain: 'shop.example.com',
  });
  expect(event.status, JSON.stringify(event.body)).toBe(200);
  await waitForMintsSettled(platform);
  return event.body.walletAddress;
}

beforeAll(async () => {
  platform = await startTestPlatform();
  brand = await platform.createBrand({
    rules: [{ eventType: 'first_purchase', rewardAmount: 70, cooldownHours: 0, maxClaims: -1 }],
  });
}, 120_000);

afterAll(async () => {
  await platform?.stop();
});

describe('GET /services/balance/:brandId/:userIdentifier', () => {
  it('is the live on-chain balance of the user’s wallet', async () => {
    const wallet = await earnMinted('Wallet.Owner@example.com');
    const res = await signedGet(`/services/balance/${brand.brandId}/wallet.owner%40example.com`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toEqual({
      success: true,
      brandId: brand.brandId,
      userIdentifier: 'wallet.owner@example.com',
      walletAddress: wallet.toLowerCase(),
      balance: 70,
      pending: 0,
      figures: {
        walletAddress: wallet.toLowerCase(),
        counts: 'wallet-on-chain+ledger',
        onChain: 70,
        pending: 0,
        reserved: 0,
        spendable: 70,
        earned: { total: 70, confirmed: 70, pending: 0, unminted: 0, reversed: 0 },
        debt: 0,
      },
    });
    expect(await tokenBalance(platform, wallet)).toBe(70n);
  });

  it('counts a mint that is on chain but not yet recorded as confirmed once: in the balance, not also pending', async () => {
    const wallet = await earnMinted('between@example.com');
    // The moment between the batch's block and the tracker reading its receipt: the ledger still says
    // `submitted` while the chain already holds the tokens.
    const { id } = await platform.deps.db
      .selectFrom('reward_mints')
      .select('id')
      .where('wallet_address', '=', wallet.toLowerCase())
      .executeTakeFirstOrThrow();
    await platform.deps.db.updateTable('reward_mints').set({ status: 'submitted' }).where('id', '=', id).execute();
    try {
      const res = await signedGet(`/services/balance/${brand.brandId}/between%40example.com`);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body).toMatchObject({ balance: 70, pending: 0 });
    } finally {
      await platform.deps.db.updateTable('reward_mints').set({ status: 'confirmed' }).where('id', '=', id).execute();
    }
  });

  it('a user without a wallet has none and 0', async () => {
    const res = await signedGet(`/services/balance/${brand.brandId}/nobody%40example.com`);
    expect(res.body).toMatchObject({ walletAddress: null, balance: 0, pending: 0 });
  });

  it('needs the brand signature', async () => {
    const res = await platform.get(`/services/balance/${brand.brandId}/nobody%40example.com`);
    expect(res.status).toBe(401);
    expect(res.body.details.reason).toBe('signature_required');
  });
});
