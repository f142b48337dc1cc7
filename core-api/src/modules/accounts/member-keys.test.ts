import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  type AccountKey,
  type CreatedBrand,
  type IdentityKey,
  identityKeyOf,
  isAgentKey,
  type Member,
} from '@pts/shared';
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitForMintsSettled } from '../../../test/chain-helpers.ts';
import { startTestPlatform, type TestPlatform } from '../../../test/platform.ts';
import { agentIdentity } from '../../agent/rewards/agent-rewards.service.ts';
import type { DB } from '../../db/schema.ts';
import { readActivityByBrand } from '../analytics/analytics.repository.ts';
import { readAffordCounts, readEarningsTotals, readMemberActivity } from '../ledger/member-activity.ts';
import { readMemberLedger } from '../ledger/member-ledger.ts';
import { readWalletBalance, type WalletBalanceDeps } from '../ledger/wallet-balance.ts';
import { readMemberPerkClaims } from '../perks/perks.repository.ts';
import { resolveMember } from './accounts.service.ts';

// Who is a member (docs/identity-linking.md, "Members"), checked three ways: the compiler refuses a raw or
// identity key where a resolved member or account key is expected; one predicate leaves agent identities out
// of every member count (there were three, and the commonest let agent_… identities in); the process builds
// one wallet read.

const SRC = join(dirname(fileURLToPath(import.meta.url)), '../..');

/**
 * Never called: what the compiler must refuse. `tsc -p core-api` fails on an unused @ts-expect-error, so
 * each line below is a check that an identity key cannot pass for an account key or a member.
 */
export function refusedByTheCompiler(
  db: Kysely<DB>,
  identity: IdentityKey,
  account: AccountKey,
  member: Member,
  wallet: WalletBalanceDeps,
) {
  // @ts-expect-error an identity key is not an account key: only resolution makes one
  const fromIdentity: AccountKey = identity;
  // @ts-expect-error nor is a raw string (a request's userId)
  const fromString: AccountKey = 'discord_1@pts.example';
  // @ts-expect-error a member ledger read takes a resolved Member, never a raw user id
  void readMemberActivity(db, 'discord_1@pts.example', [], new Date(), new Date());
  // @ts-expect-error nor an account key alone: the member's other identities would be left out
  void readMemberPerkClaims(db, account);
  // @ts-expect-error the ledger of a brand takes the resolved member, not a list of keys
  void readMemberLedger(db, 'brand', [identity]);
  // @ts-expect-error a wallet read takes an identity key (a request's, named by identityKeyOf) or an account key
  void readWalletBalance(wallet, 'discord_1@pts.example');
  void readWalletBalance(wallet, identity);
  void readWalletBalance(wallet, account);
  const accepted: string = account; // an account key is still a string where any key will do
  return [fromIdentity, fromString, accepted, readMemberActivity(db, member, [], new Date(), new Date())];
}

describe('isAgentKey', () => {
  it.each([
    ['agent_k1@agents.pts', true],
    ['agent:k1', true],
    ['agentsmith@example.com', false],
    ['discord_1@pts.example', false],
    ['alice@example.com', false],
  ])('%s → %s', (key, agent) => {
    expect(isAgentKey(key)).toBe(agent);
  });
});

describe('one predicate for "member", one wallet read', () => {
  it('writes the agent-identity patterns in one place (modules/accounts/member-keys.ts; migrations are frozen)', () => {
    const files = (dir: string): string[] =>
      readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
        const path = join(dir, entry.name);
        if (entry.isDirectory()) return entry.name === 'migrations' || entry.name === 'artifacts' ? [] : files(path);
        return entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') ? [path] : [];
      });
    const writers = files(SRC)
      .filter((path) => /LIKE\s+'agent|startsWith\('agent_/.test(readFileSync(path, 'utf8')))
      .map((path) => relative(SRC, path));
    expect(writers).toEqual([]);
  });

  it('builds the BalanceService once in compose.ts (the agent and /services/balance read the same wallet)', () => {
    const compose = readFileSync(join(SRC, 'compose.ts'), 'utf8');
    expect(compose.match(/createBalanceService\(/g)).toHaveLength(1);
  });
});

describe('agent identities are not members', () => {
  let platform: TestPlatform;
  let brand: CreatedBrand;
  const AGENT = agentIdentity('k34');

  beforeAll(async () => {
    platform = await startTestPlatform({ PTS_RATE_LIMIT_IP_PER_MINUTE: '100000' });
    platform.clock.set('2026-11-01T10:00:00Z');
    brand = await platform.createBrand({
      domain: 'members.example',
      rules: [{ eventType: 'earn', rewardAmount: 100, cooldownHours: 0, maxClaims: -1 }],
    });
    for (const user of ['one@members.example', 'two@members.example', AGENT]) {
      platform.clock.advance(61_000);
      const res = await platform.signedPost(
        '/pts-api/manual-event',
        { brandId: brand.brandId, eventType: 'earn', userEmail: user, domain: 'members.example' },
        brand.securityKey,
      );
      expect(res.status, JSON.stringify(res.body)).toBe(200);
    }
    await waitForMintsSettled(platform);
    platform.clock.advance(60_000);
  }, 120_000);

  afterAll(async () => {
    await platform?.stop();
  });

  it('leaves the agent identity out of the intelligence populations, as analytics does', async () => {
    const { db } = platform.deps;
    const now = platform.clock.now();
    const from = new Date(now.getTime() - 86_400_000);
    const totals = await readEarningsTotals(db, [brand.brandId], from, now);
    const afford = await readAffordCounts(db, brand.brandId, [100n], now);
    const activity = (await readActivityByBrand(db, { from, to: now, days: 1 })).get(brand.brandId);
    expect({ ranked: totals.length, couldAfford: afford.members, analytics: activity?.members }).toEqual({
      ranked: 2,
      couldAfford: 2,
      analytics: 2,
    });
  });

  it('resolves a member to every identity of the account, the account first', async () => {
    const member = await resolveMember(platform.deps.db, identityKeyOf('one@members.example'));
    expect(member).toEqual({ accountKey: 'one@members.example', identityKeys: ['one@members.example'] });
  });
});
