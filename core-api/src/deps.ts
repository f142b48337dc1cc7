import type { Clock } from '@pts/shared';
import type { Logger } from 'pino';
import type { ChainInfo } from './chain/chain-info.ts';
import type { ChainReads } from './chain/chain-reads.ts';
import type { ChainPublicClient } from './chain/deploy.ts';
import type { Minter } from './chain/minter.types.ts';
import type { RelayerSender } from './chain/relayer.types.ts';
import type { Config } from './config.ts';
import type { Database, DatabaseKind } from './db/database.ts';
import type { TxtResolver } from './modules/dns/dns.service.ts';
import type { IdentityProvider } from './modules/identity/identity-provider.ts';
import type { LocalTokenIssuer } from './modules/identity/local-token-issuer.ts';
import type { PaymentProvider } from './modules/payments/payment-provider.ts';
import type { ConstraintChecker } from './modules/perks/constraints/constraint-checker.ts';
import type { PerkChain } from './modules/perks/perk-chain.ts';
import type { IdentityWalletProvider, WalletProvider } from './modules/wallets/wallet-provider.ts';
import type { Metrics } from './observability/metrics.ts';
import type { SecretBox } from './security/secret-box.ts';

export type { ChainInfo } from './chain/chain-info.ts';
export type { TxtResolver } from './modules/dns/dns.service.ts';

/** Everything a request handler or job may touch. Passed, never imported (CONVENTIONS habit 5). */
export interface AppDeps {
  config: Config;
  db: Database;
  dbKind: DatabaseKind;
  pingDatabase(): Promise<void>;
  clock: Clock;
  logger: Logger;
  metrics: Metrics;
  secrets: SecretBox;
  wallets: WalletProvider & IdentityWalletProvider;
  minter: Minter;
  /** The relayer's transaction sender (its own key and nonces; docs/relayer.md). */
  relayer: RelayerSender;
  /** Read-only client of the configured chain (contract reads, logs). */
  publicClient: ChainPublicClient;
  chain: ChainInfo;
  resolveTxt: TxtResolver;
  adminToken: string;
  /** Signs and verifies the local identity provider's access tokens (ES256). */
  tokenIssuer: LocalTokenIssuer;
  /** Verifies access tokens (relay): the local issuer's, or Privy's. */
  identity: IdentityProvider;
  /** Token purchases: Stripe, or the embedded local checkout (payments wiring). */
  payments: PaymentProvider;
  /** PerkNFT collections (collection admin) and RewardToken balance reads (docs/perks.md). */
  perkChain?: PerkChain;
  /**
   * Balances and perks claimed as of the newest block this process caught up with (chain/chain-reads.ts):
   * for answers that show them (agent tools, catalogues); checks that gate a spend read the chain live.
   */
  chainReads?: ChainReads;
  /** Perk eligibility: external API, token balance and chat role constraints (docs/constraints.md). */
  constraints?: ConstraintChecker;
}
