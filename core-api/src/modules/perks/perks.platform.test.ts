import type { CreatedBrand } from '@pts/shared';
import { createPublicClient, createWalletClient, http } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../../../test/platform.ts';
import { ANVIL_RELAYER_PRIVATE_KEY } from '../../chain/anvil.ts';
import { perkNFTAbi, pointsSaleAbi } from '../../chain/artifacts/index.ts';
import { defineAppChain } from '../../chain/deploy.ts';
import { runCli } from '../../cli/run-cli.ts';
import type { PerkChain } from './perk-chain.ts';

let platform: TestPlatform;
let brand: CreatedBrand;
let chain: PerkChain;

beforeAll(async () => {
  platform = await startTestPlatform();
  brand = await platform.createBrand({ name: 'Perk Brand', domain: 'perks.example.com' });
  chain = platform.deps.perkChain as PerkChain;
});

afterAll(async () => {
  await platform?.stop();
});

const admin = () => ({ authorization: `Bearer ${platform.deps.adminToken}` });
const patch = async (path: string, body: unknown) => {
  const response = await fetch(`${platform.url}${path}`, {
    method: 'PATCH',
    headers: { ...admin(), 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON bodies
  return { status: response.status, body: (await response.json()) as any };
};

async function pts(argv: string[]) {
  let stdout = '';
  let stderr = '';
  const code = await runCli(argv, {
    env: { PTS_URL: platform.url, PTS_ADMIN_TOKEN: platform.deps.adminToken },
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
  });
  return { code, stdout, stderr };
}

describe('perk catalogue on the platform (anvil)', () => {
  it('POST /admin/perks creates the row and the PerkNFT collection; they agree', async () => {
    const created = await platform.post(
      '/admin/perks',
      {
        brandId: brand.brandId,
        name: 'Free Coffee',
        description: 'One coffee',
        category: 'Food',
        cost: 150,
        maxSupply: 100,
        maxPerUser: 2,
        chargesPerToken: 3,
        imageUrl: 'https://cdn.example.com/coffee.png',
      },
      admin(),
    );
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const perk = created.body.perk;
    expect(perk).toMatchObject({
      brandId: brand.brandId,
      name: 'Free Coffee',
      category: 'food',
      cost: 150,
      maxSupply: 100,
      maxPerUser: 2,
      chargesPerToken: 3,
      active: true,
      chainStatus: 'synced',
      chainTxHash: expect.stringMatching(/^0x[0-9a-f]{64}$/),
    });
    expect(await chain.getCollection(BigInt(perk.perkId))).toEqual({
      brand: expect.stringMatching(new RegExp(`^${brand.brandId}$`, 'i')),
      price: 150n,
      maxSupply: 100n,
      maxPerUser: 2n,
      chargesPerToken: 3n,
      active: true,
    });
  });

  it('defaults: unlimited supply (0 on-chain), one per user, one charge; listed by brand', async () => {
    const created = await platform.post('/admin/perks', { brandId: brand.brandId, name: 'Sticker', cost: 0 }, admin());
    expect(created.status).toBe(201);
    expect(created.body.perk).toMatchObject({
      maxSupply: null,
      maxPerUser: 1,
      chargesPerToken: 1,
      category: 'general',
    });
    const onChain = await chain.getCollection(BigInt(created.body.perk.perkId));
    expect(onChain).toMatchObject({ maxSupply: 0n, maxPerUser: 1n, chargesPerToken: 1n, price: 0n });

    const list = await platform.get(`/admin/perks?brand=${brand.brandId}`, admin());
    expect(list.status).toBe(200);
    expect(list.body.perks.map((p: { name: string }) => p.name)).toEqual(
      expect.arrayContaining(['Free Coffee', 'Sticker']),
    );
  });

  it('refuses bad input, unknown brands, duplicates and callers without the admin token', async () => {
    const noToken = await platform.post('/admin/perks', { brandId: brand.brandId, name: 'X', cost: 1 });
    expect(noToken.status).toBe(401);
    const bad = await platform.post(
      '/admin/perks',
      { brandId: brand.brandId, name: '', cost: -1, maxSupply: 0 },
      admin(),
    );
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ success: false, code: 'VALIDATION_ERROR' });
    expect(bad.body.details.errors).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^name:/),
        expect.stringMatching(/^cost:/),
        expect.stringMatching(/^maxSupply:/),
      ]),
    );
    const unknown = await platform.post(
      '/admin/perks',
      { brandId: `0x${'1'.repeat(40)}`, name: 'Ghost', cost: 1 },
      admin(),
    );
    expect(unknown.status).toBe(404);
    const duplicate = await platform.post(
      '/admin/perks',
      { brandId: brand.brandId, name: 'free coffee', cost: 5 },
      admin(),
    );
    expect(duplicate.status).toBe(409);
    expect(duplicate.body.error).toMatch(/already has a perk named "Free Coffee"/);
    const missing = await patch('/admin/perks/999999', { cost: 1 });
    expect(missing.status).toBe(404);
    expect(missing.body.code).toBe('PERK_NOT_FOUND');
  });

  it('PATCH updates the collection on-chain; a contract refusal keeps the previous values', async () => {
    const created = await platform.post(
      '/admin/perks',
      { brandId: brand.brandId, name: 'Tote Bag', cost: 500, maxSupply: 2, maxPerUser: 1 },
      admin(),
    );
    const id = created.body.perk.perkId as number;
    const updated = await patch(`/admin/perks/${id}`, { cost: 450, maxSupply: 5, active: false, name: 'Tote' });
    expect(updated.status, JSON.stringify(updated.body)).toBe(200);
    expect(updated.body.perk).toMatchObject({
      name: 'Tote',
      cost: 450,
      maxSupply: 5,
      active: false,
      chainStatus: 'synced',
    });
    expect(await chain.getCollection(BigInt(id))).toMatchObject({ price: 450n, maxSupply: 5n, active: false });

    // Two claims, then a supply below them: PerkNFT refuses (MaxSupplyBelowClaimed) and nothing changes.
    await patch(`/admin/perks/${id}`, { active: true, cost: 0 });
    await claim(id, privateKeyToAccount(generatePrivateKey()).address);
    await claim(id, privateKeyToAccount(generatePrivateKey()).address);
    const refused = await patch(`/admin/perks/${id}`, { maxSupply: 1, cost: 7 });
    expect(refused.status).toBe(409);
    expect(refused.body.error).toMatch(/MaxSupplyBelowClaimed/);
    const after = await platform.get(`/admin/perks/${id}`, admin());
    expect(after.body.perk).toMatchObject({ maxSupply: 5, cost: 0, chainStatus: 'synced' });
    expect(await chain.getCollection(BigInt(id))).toMatchObject({ price: 0n, maxSupply: 5n });
  });

  it('a create that stopped half-way (row pending, collection missing or already created) is finished by a retry', async () => {
    // Crash after the DB write, before the chain: the row is pending, no collection.
    const pending = await platform.deps.db
      .insertInto('perks')
      .values({
        brand_id: brand.brandId,
        name: 'Half Done',
        cost: 10n,
        max_supply: null,
        max_per_user: 1n,
        charges_per_token: 1n,
        active: true,
        image_url: null,
        chain_status: 'pending',
        created_at: new Date(),
        updated_at: new Date(),
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    expect(await chain.getCollection(pending.id)).toBeUndefined();
    const listed = await platform.get(`/services/perks/${brand.brandId}`);
    expect(listed.body.perks.map((p: { id: number }) => p.id)).not.toContain(Number(pending.id));

    const retried = await platform.post(
      '/admin/perks',
      { brandId: brand.brandId, name: 'Half Done', cost: 12 },
      admin(),
    );
    expect(retried.status, JSON.stringify(retried.body)).toBe(201);
    expect(retried.body.perk).toMatchObject({ perkId: Number(pending.id), cost: 12, chainStatus: 'synced' });
    expect(await chain.getCollection(pending.id)).toMatchObject({ price: 12n });

    // Crash after the chain transaction, before the DB update: the collection exists, the row is pending.
    const second = await platform.deps.db
      .insertInto('perks')
      .values({
        brand_id: brand.brandId,
        name: 'Chain Ahead',
        cost: 20n,
        max_supply: 50n,
        max_per_user: 1n,
        charges_per_token: 1n,
        active: true,
        image_url: null,
        chain_status: 'pending',
        created_at: new Date(),
        updated_at: new Date(),
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    await chain.createCollection(second.id, {
      brand: brand.brandId as `0x${string}`,
      price: 20n,
      maxSupply: 50n,
      maxPerUser: 1n,
      chargesPerToken: 1n,
      active: true,
    });
    const finished = await platform.post(
      '/admin/perks',
      { brandId: brand.brandId, name: 'Chain Ahead', cost: 20, maxSupply: 50 },
      admin(),
    );
    expect(finished.status, JSON.stringify(finished.body)).toBe(201);
    expect(finished.body.perk).toMatchObject({ perkId: Number(second.id), chainStatus: 'synced' });
  });

  it('10 concurrent creates all land on-chain (collection-admin nonces never collide)', async () => {
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        platform.post('/admin/perks', { brandId: brand.brandId, name: `Bulk ${i}`, cost: i, maxSupply: 10 }, admin()),
      ),
    );
    expect(results.map((r) => r.status)).toEqual(Array(10).fill(201));
    const ids = results.map((r) => BigInt(r.body.perk.perkId));
    expect(new Set(ids).size).toBe(10);
    const onChain = await Promise.all(ids.map((id) => chain.getCollection(id)));
    expect(onChain.map((c) => c?.price)).toEqual(ids.map((_, i) => BigInt(i)));
  });

  it('GET /services/perks/:brandId lists the catalogue with live remaining supply and filters', async () => {
    const created = await platform.post(
      '/admin/perks',
      { brandId: brand.brandId, name: 'Limited Pin', cost: 0, maxSupply: 2, category: 'merch' },
      admin(),
    );
    const id = created.body.perk.perkId as number;
    const before = await platform.get(`/services/perks/${brand.brandId}?category=merch`);
    expect(before.status).toBe(200);
    expect(before.body.perks).toHaveLength(1);
    expect(before.body.perks[0]).toMatchObject({
      id,
      maxSupply: 2,
      totalClaimed: 0,
      remainingSupply: 2,
      available: true,
    });

    await claim(id, privateKeyToAccount(generatePrivateKey()).address);
    await claim(id, privateKeyToAccount(generatePrivateKey()).address);
    const soldOut = await platform.get(`/services/perks/${brand.brandId}?category=merch`);
    expect(soldOut.body.perks[0]).toMatchObject({ totalClaimed: 2, remainingSupply: 0, available: false });
    const available = await platform.get(`/services/perks/${brand.brandId}?available=true`);
    expect(available.body.perks.map((p: { id: number }) => p.id)).not.toContain(id);
    expect(available.body.perks.every((p: { available: boolean }) => p.available)).toBe(true);
    const unavailable = await platform.get(`/services/perks/${brand.brandId}?available=false`);
    expect(unavailable.body.perks.map((p: { id: number }) => p.id)).toContain(id);

    expect((await platform.get(`/services/perks/${brand.brandId}?available=maybe`)).status).toBe(400);
    expect((await platform.get('/services/perks/not-a-brand')).status).toBe(400);
    expect((await platform.get(`/services/perks/0x${'2'.repeat(40)}`)).status).toBe(404);
  });

  it('CLI: perk create / update / list print JSON from the admin API', async () => {
    const create = await pts([
      'perk',
      'create',
      '--brand',
      brand.brandId,
      '--name',
      'CLI Hoodie',
      '--cost',
      '900',
      '--supply',
      '25',
      '--max-per-user',
      'unlimited',
      '--category',
      'merch',
      '--charges',
      '2',
      '--json',
    ]);
    expect(create, create.stderr).toMatchObject({ code: 0, stderr: '' });
    const perk = JSON.parse(create.stdout);
    expect(perk).toMatchObject({
      perkId: expect.any(Number),
      brandId: brand.brandId,
      name: 'CLI Hoodie',
      cost: 900,
      maxSupply: 25,
      maxPerUser: 0,
      chargesPerToken: 2,
      chainStatus: 'synced',
    });
    expect(await chain.getCollection(BigInt(perk.perkId))).toMatchObject({ maxPerUser: 0n, maxSupply: 25n });

    const update = await pts([
      'perk',
      'update',
      '--id',
      String(perk.perkId),
      '--cost',
      '800',
      '--active',
      'off',
      '--json',
    ]);
    expect(update.code, update.stderr).toBe(0);
    expect(JSON.parse(update.stdout)).toMatchObject({ cost: 800, active: false });

    const list = await pts(['perk', 'list', '--brand', brand.brandId, '--json']);
    expect(list.code).toBe(0);
    expect(JSON.parse(list.stdout).perks.map((p: { name: string }) => p.name)).toContain('CLI Hoodie');
    const table = await pts(['perk', 'list', '--brand', brand.brandId]);
    expect(table.stdout).toMatch(/CLI Hoodie\s+merch\s+800\s+25\s+unlimited\s+off\s+synced/);

    const archived = await pts(['perk', 'archive', '--id', String(perk.perkId), '--json']);
    expect(archived.code, archived.stderr).toBe(0);
    expect(JSON.parse(archived.stdout).archivedAt).toEqual(expect.any(String));
    expect(
      (await platform.get(`/services/perks/${brand.brandId}`)).body.perks.map((p: { name: string }) => p.name),
    ).not.toContain('CLI Hoodie');
    const again = await pts(['perk', 'archive', '--id', String(perk.perkId)]);
    expect(again.code).not.toBe(0);
    expect(again.stderr).toMatch(/already archived/);
    const restored = await pts(['perk', 'restore', '--id', String(perk.perkId)]);
    expect(restored.code, restored.stderr).toBe(0);
    expect(restored.stdout).toMatch(/Restored perk CLI Hoodie/);

    const usage = await pts(['perk', 'create', '--brand', brand.brandId, '--name', 'No Cost']);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toMatch(/--cost is required/);
  });
});

/** Claims one perk for `user` through PointsSale.claimPerk, signed by the relayer key (price 0: no allowance needed). */
async function claim(collectionId: number, user: `0x${string}`): Promise<void> {
  const appChain = defineAppChain(platform.deps.chain.chainId, platform.deps.chain.rpcUrl);
  const publicClient = createPublicClient({ chain: appChain, transport: http(platform.deps.chain.rpcUrl) });
  const wallet = createWalletClient({
    account: privateKeyToAccount(ANVIL_RELAYER_PRIVATE_KEY),
    chain: appChain,
    transport: http(platform.deps.chain.rpcUrl),
  });
  const hash = await wallet.writeContract({
    address: platform.deps.chain.contracts.pointsSale as `0x${string}`,
    abi: pointsSaleAbi,
    functionName: 'claimPerk',
    args: [user, BigInt(collectionId)],
  });
  const receipt = await publicClient.waitForTransactionReceipt({ hash, pollingInterval: 50 });
  expect(receipt.status).toBe('success');
  expect(
    await publicClient.readContract({
      address: platform.deps.chain.contracts.perkNft as `0x${string}`,
      abi: perkNFTAbi,
      functionName: 'claimedBy',
      args: [user, BigInt(collectionId)],
    }),
  ).toBe(1n);
}
