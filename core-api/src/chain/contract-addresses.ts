import type { Address } from 'viem';
import type { Config } from '../config.ts';
import type { ChainInfo } from './chain-info.ts';

/** The four contracts a relayed call may target (spec 4.9 rule 3). */
export interface RelayContracts {
  rewardToken: Address;
  perkNft: Address | undefined;
  pointsSale: Address | undefined;
  businessEscrow: Address | undefined;
}

/** The four relay targets: deployed here (`deps.chain.contracts`) or configured (PTS_*_ADDRESS). */
export function relayContractsOf(deps: { chain: ChainInfo; config: Config }): RelayContracts {
  const known = deps.chain.contracts;
  const pick = (name: string, configured: string | undefined) => (known[name] ?? configured) as Address | undefined;
  return {
    rewardToken: (known.rewardToken ?? deps.config.PTS_REWARD_TOKEN_ADDRESS) as Address,
    perkNft: pick('perkNft', deps.config.PTS_PERK_NFT_ADDRESS),
    pointsSale: pick('pointsSale', deps.config.PTS_POINTS_SALE_ADDRESS),
    businessEscrow: pick('businessEscrow', deps.config.PTS_BUSINESS_ESCROW_ADDRESS),
  };
}
