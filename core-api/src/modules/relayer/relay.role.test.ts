import { encodeFunctionData } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../../../test/platform.ts';
import { pointsSaleAbi } from '../../chain/artifacts/index.ts';

// A process running only the relayer role is the spec's `{relayer_url}`: the relay answers at `/relay` too.
// Its per-IP limit (in-process) answers 429 with the X-RateLimit-* headers.

let platform: TestPlatform;

beforeAll(async () => {
  platform = await startTestPlatform({ PTS_ROLES: 'relayer', PTS_RELAYER_IP_PER_MINUTE: '3' });
});

afterAll(async () => {
  await platform?.stop();
});

describe('relayer role alone', () => {
  it('serves POST /relay at the root and limits requests per IP', async () => {
    const user = privateKeyToAccount(generatePrivateKey()).address;
    const token = platform.deps.tokenIssuer.issueAccessToken({
      subject: 'did:pts:local:role',
      email: 'role@example.com',
      walletAddress: user,
    });
    const body = {
      to: platform.deps.chain.contracts.pointsSale,
      data: encodeFunctionData({ abi: pointsSaleAbi, functionName: 'claimPerk', args: [user, 123_456n] }),
      userAddress: user,
    };
    const headers = { authorization: `Bearer ${token}` };
    const atRoot = await platform.post('/relay', body, headers);
    expect(atRoot.status).toBe(403);
    expect(atRoot.body.details).toMatchObject({ reason: 'unknown_collection' });
    expect((await platform.post('/relayer/relay', body, headers)).status).toBe(403);
    expect((await platform.post('/relay', {}, headers)).body.code).toBe('MISSING_FIELDS');
    const limited = await platform.post('/relay', body, headers);
    expect(limited.status).toBe(429);
    expect(limited.body).toMatchObject({ code: 'RATE_LIMIT_EXCEEDED', details: { reason: 'rate_limit_exceeded' } });
    expect(limited.body.retryAfter).toBeGreaterThan(0);
    expect(limited.headers.get('x-ratelimit-limit')).toBe('3');
    expect(limited.headers.get('x-ratelimit-remaining')).toBe('0');
  });
});
