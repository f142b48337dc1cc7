import { randomBytes } from 'node:crypto';
import type { CreatedBrand } from '@pts/shared';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tokenBalance, waitForMintsSettled } from '../../test/chain-helpers.ts';
import { createTestDatabase, type TestDatabase, testDatabaseKind } from '../../test/database.ts';
import { startTestPlatform, type TestPlatform } from '../../test/platform.ts';
import { ANVIL_MINTER_PRIVATE_KEY } from './anvil.ts';
import type { Minter } from './minter.types.ts';
import { createElectedMinter } from './minter-election.ts';

/** Records what the election wrapper forwards; the wrapper's logic is what is under test here. */
function recordingMinter() {
  const calls: string[] = [];
  const minter: Minter = {
    submit: async (id) => {
      calls.push(`submit:${id}`);
      return { status: 'submitted', transactionHash: `0x${'ab'.repeat(32)}` };
    },
    beginInline: async () => {
      calls.push('beginInline');
      return {
        signer: { sign: async () => ({ chainTxId: 1n, transactionHash: `0x${'cd'.repeat(32)}` }) },
        committed: () => Promise.resolve({ status: 'submitted', transactionHash: `0x${'cd'.repeat(32)}` }),
        rolledBack: () => {},
        released: async () => {},
      };
    },
    reverse: async () => {
      calls.push('reverse');
    },
    processPending: async () => {
      calls.push('processPending');
      return { claimed: 0, batches: 0, transactionHashes: [], confirmedTransactions: 0, requeued: 0, replaced: 0 };
    },
    mintingState: () => ({ status: 'ok', signer: true, waitingTransactions: 0, lastMinedAt: null }),
    queueStatus: async () => {
      throw new Error('not used');
    },
    start: () => {
      calls.push('start');
    },
    stop: async () => {
      calls.push('stop');
    },
  };
  return { minter, calls };
}

describe('minter election', () => {
  it('lets only the lock holder sign; a follower answers pending and takes over when the lock frees', async () => {
    const { minter, calls } = recordingMinter();
    let available = false;
    let released = 0;
    const elected = createElectedMinter({
      minter,
      acquireLock: async () => (available ? { release: async () => void released++ } : null),
      logger: pino({ level: 'silent' }),
      retryMs: 20,
    });
    elected.start();
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(elected.isLeader()).toBe(false);
    expect(await elected.submit('m1')).toEqual({ status: 'pending' });
    // A follower's accept path gets no signer: its rows go in pending, for the leader's sweep.
    expect(await elected.beginInline()).toBeUndefined();
    await expect(elected.processPending()).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
    expect(calls).toEqual([]);

    available = true;
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(elected.isLeader()).toBe(true);
    expect(calls).toContain('start');
    expect((await elected.submit('m2')).status).toBe('submitted');
    expect(calls).toContain('submit:m2');
    const leaderInline = await elected.beginInline();
    expect(leaderInline?.signer).toBeDefined();
    expect((await leaderInline?.committed())?.status).toBe('submitted');
    await elected.stop();
    expect(released).toBe(1);
  });
});

// Two replicas over one PostgreSQL database and one chain: the advisory lock elects one signer.
describe.runIf(testDatabaseKind === 'postgres')('two replicas on PostgreSQL', () => {
  let database: TestDatabase;
  let leader: TestPlatform;
  let follower: TestPlatform;
  let brand: CreatedBrand;

  beforeAll(async () => {
    database = await createTestDatabase();
    const shared = {
      PTS_MASTER_KEY: randomBytes(32).toString('hex'),
      PTS_WALLET_MNEMONIC: 'test test test test test test test test test test test junk',
      PTS_RECEIPT_POLL_MS: '100',
    };
    leader = await startTestPlatform(shared, { database });
    follower = await startTestPlatform(
      {
        ...shared,
        PTS_CHAIN: 'rpc',
        PTS_RPC_URL: leader.deps.chain.rpcUrl,
        PTS_MINTER_PRIVATE_KEY: ANVIL_MINTER_PRIVATE_KEY,
        PTS_REWARD_TOKEN_ADDRESS: leader.deps.chain.contracts.rewardToken!,
      },
      { database },
    );
    brand = await leader.createBrand({
      domain: 'replicas.example',
      rules: [{ eventType: 'visit', rewardAmount: 12, cooldownHours: 0, maxClaims: -1 }],
    });
  });

  afterAll(async () => {
    await follower?.stop();
    await leader?.stop();
    await database?.close();
  });

  it('has exactly one leader', () => {
    expect(
      [leader.deps.minter, follower.deps.minter].map((m) => (m as unknown as { isLeader(): boolean }).isLeader()),
    ).toEqual([true, false]);
  });

  it("mints a follower's reward through the leader, exactly once", async () => {
    const res = await follower.post('/pts-api/manual-event', {
      brandId: brand.brandId,
      eventType: 'visit',
      userEmail: 'replica@example.com',
      domain: 'replicas.example',
    });
    expect(res.status).toBe(200);
    expect(res.body.mintStatus).toBe('pending');
    expect(res.body.transactionHash).toBeUndefined();
    // The leader sweeps rows a few seconds old; its (manual) clock has to get there.
    leader.clock.advance(5_000);
    await waitForMintsSettled(leader, 15_000);
    expect(await tokenBalance(leader, res.body.walletAddress)).toBe(12n);
  });
});
