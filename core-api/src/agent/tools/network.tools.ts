import { PTS_PER_USD } from '@pts/shared';
import { z } from 'zod';
import { type AgentTool, defineAgentTool } from '../agent-tool.ts';
import type { AgentToolDeps } from '../agent-tool-deps.ts';

/** Names of the chains pts is deployed on or developed against. */
const CHAIN_NAMES: Record<number, string> = {
  1868: 'Soneium',
  1946: 'Soneium Minato (testnet)',
  31337: 'Anvil (local development)',
};

const amount = z.string().regex(/^\d+$/).describe('Whole pts, as a decimal string (exact)');

const networkInfoSchema = z.object({
  chain: z.object({
    id: z.number().int(),
    name: z.string(),
    mode: z.enum(['local', 'rpc']).describe('`local`: an embedded development chain; `rpc`: a configured network'),
    explorerUrl: z.string(),
  }),
  token: z.object({ symbol: z.literal('pts'), decimals: z.literal(0) }),
  contracts: z.record(z.string(), z.string()).describe('Contract name → address on this chain'),
  exchangeRates: z.object({
    ptsPerUsd: z.number().int().describe('pts a purchase of 1 USD buys (token sales, spec 1 item 4)'),
    usdPerPts: z.string().describe('USD value of 1 pts at that rate, decimal string'),
  }),
});

const networkStatsSchema = z.object({
  brands: z.number().int().describe('Registered brands'),
  users: z.number().int().describe('Users with an identity (agent identities excluded)'),
  acceptedEvents: z.number().int().describe('Events that earned a reward, all time'),
  rewards: z.object({
    count: z.number().int().describe('Reward mints recorded'),
    totalIssued: amount.describe('pts confirmed on chain plus pts still being minted'),
    confirmed: amount,
    pending: amount.describe('Accepted, not yet confirmed on chain'),
    failed: amount.describe('Mints that failed for good (not counted in totalIssued)'),
  }),
  basis: z.object({ asOf: z.string().describe('ISO 8601 time of the count'), period: z.literal('all_time') }),
});

/** The network area (spec 4.1): what chain pts runs on, and how big the network is. Both public. */
export function networkTools(d: Pick<AgentToolDeps, 'chain' | 'settings' | 'networkReads'>): AgentTool[] {
  const deps = d;
  return [
    defineAgentTool({
      name: 'get_network_info',
      method: 'get',
      path: '/network/info',
      summary: 'Chain, contract addresses and exchange rates of the pts network',
      description:
        'The chain pts rewards are minted on (id, name, explorer), the deployed contract addresses and the ' +
        'token purchase rate (pts per USD). pts are whole units (no decimals). Static configuration: call once.',
      access: 'public',
      result: networkInfoSchema,
      example: () => ({}),
      handle: async () => ({
        chain: {
          id: deps.chain.chainId,
          name: CHAIN_NAMES[deps.chain.chainId] ?? `Chain ${deps.chain.chainId}`,
          mode: deps.settings.chainMode,
          explorerUrl: deps.chain.explorerUrl,
        },
        token: { symbol: 'pts' as const, decimals: 0 as const },
        contracts: { ...deps.chain.contracts },
        exchangeRates: { ptsPerUsd: PTS_PER_USD, usdPerPts: (1 / PTS_PER_USD).toFixed(3) },
      }),
    }),
    defineAgentTool({
      name: 'get_network_stats',
      method: 'get',
      path: '/network/stats',
      summary: 'Brand count, user count and reward totals of the network',
      description:
        'Counts over the whole network, all time, read live: registered brands, users (agent identities ' +
        'excluded), events that earned a reward, and pts issued as reward mints (confirmed, pending, failed; ' +
        'amounts are whole pts as decimal strings). An empty network answers zeros.',
      access: 'public',
      cached: true,
      result: networkStatsSchema,
      example: () => ({}),
      handle: async (_input, context) => {
        const counts = await deps.networkReads.readNetworkCounts();
        return {
          brands: counts.brands,
          users: counts.users,
          acceptedEvents: counts.acceptedEvents,
          rewards: {
            count: counts.rewards.count,
            totalIssued: counts.rewards.total.toString(),
            confirmed: counts.rewards.confirmed.toString(),
            pending: counts.rewards.pending.toString(),
            failed: counts.rewards.failed.toString(),
          },
          basis: { asOf: context.clock.now().toISOString(), period: 'all_time' as const },
        };
      },
    }),
  ];
}
