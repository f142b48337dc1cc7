import { z } from 'zod';

/** State of one dependency as the health bodies report it (spec 2.9 shows `connected`). */
export const connectionStateSchema = z.enum(['connected', 'disconnected']);
export type ConnectionState = z.infer<typeof connectionStateSchema>;

/**
 * What the chain–ledger reconciler found at its last pass (docs/chain.md, "Reconciler"). Amounts are token
 * units as decimal strings. `drift`: confirmed rewards the chain lacks (or tokens it holds beyond the ledger);
 * `restoring`: rewards put back in the outbox that are not confirmed again yet; `unknown`: no pass completed.
 */
export const ledgerReconciliationSchema = z
  .object({
    status: z.enum(['ok', 'drift', 'restoring', 'unknown']),
    checkedAt: z.iso.datetime().nullable(),
    /** The block the pass compared the ledger against (decimal string). */
    blockNumber: z.string().nullable(),
    /** Tokens the ledger calls confirmed that the chain does not hold. */
    missingOnChain: z.string(),
    /** Tokens on chain beyond every mint the ledger signed (confirmed or in flight): never expected. */
    unexpectedOnChain: z.string(),
    /** Confirmed transactions found missing on chain and reopened, since this process started. */
    reopenedTransactions: z.number().int(),
    /** Rewards put back in the outbox that are not confirmed again yet. */
    restoringRewards: z.number().int(),
    /** Why the last pass failed (the chain or database did not answer). */
    error: z.string().optional(),
  })
  .meta({ id: 'LedgerReconciliation' });
export type LedgerReconciliation = z.infer<typeof ledgerReconciliationSchema>;

/** `GET /health` on every host (spec 2.9 root health, 4.12). */
export const rootHealthSchema = z
  .object({
    status: z.literal('healthy'),
    service: z.string(),
    timestamp: z.iso.datetime(),
    hostname: z.string(),
    version: z.string(),
    /** Route paths this process serves. */
    routes: z.array(z.string()),
    /** Chain–ledger agreement, on processes that run the reconciler. */
    ledger: ledgerReconciliationSchema.optional(),
  })
  .meta({ id: 'RootHealth' });
export type RootHealth = z.infer<typeof rootHealthSchema>;

/** `GET /pts-api/health`: 200 when `healthy`, 503 when `degraded`. */
export const serviceHealthSchema = z
  .object({
    status: z.enum(['healthy', 'degraded']),
    timestamp: z.iso.datetime(),
    services: z.object({
      database: connectionStateSchema,
      blockchain: connectionStateSchema,
      identity_provider: connectionStateSchema,
    }),
    /** Chain–ledger agreement (reported, not part of `status`: events are still accepted and queued). */
    ledger: ledgerReconciliationSchema.optional(),
  })
  .meta({ id: 'ServiceHealth' });
export type ServiceHealth = z.infer<typeof serviceHealthSchema>;

/** `GET /pts-api/diagnostic`: `down` without the database (503), `degraded` without the chain or the identity provider (200). */
export const diagnosticSchema = z
  .object({
    status: z.enum(['healthy', 'degraded', 'down']),
    database: connectionStateSchema,
    blockchain: connectionStateSchema,
    identity_provider: connectionStateSchema,
    timestamp: z.iso.datetime(),
    databaseKind: z.enum(['pglite', 'postgres']),
    chainId: z.number().int(),
    /** Latest block seen by the health ping (decimal string), null when the chain did not answer. */
    blockNumber: z.string().nullable(),
    contracts: z.record(z.string(), z.string()),
    minterAddress: z.string(),
    identityProviderKind: z.string(),
    /** Roles (route groups) this process serves. */
    roles: z.array(z.string()),
    ledger: ledgerReconciliationSchema.optional(),
  })
  .meta({ id: 'Diagnostic' });
export type Diagnostic = z.infer<typeof diagnosticSchema>;

/** `GET /pts-api/debug` (spec 4.4). */
export const debugInfoSchema = z
  .object({
    debug: z.string(),
    hostname: z.string(),
    path: z.string(),
    method: z.string(),
    timestamp: z.iso.datetime(),
    worker_version: z.string(),
  })
  .meta({ id: 'DebugInfo' });
export type DebugInfo = z.infer<typeof debugInfoSchema>;

/** `GET /livez`: the process is up and its event loop answers. */
export const livenessSchema = z
  .object({ status: z.literal('ok'), timestamp: z.iso.datetime() })
  .meta({ id: 'Liveness' });
export type Liveness = z.infer<typeof livenessSchema>;

/**
 * Whether this process can mint now (docs/operations.md, "Readiness"), apart from accepting events: `ok`;
 * `queueing` (the chain does not answer: events are accepted and their rewards wait); `wedged` (transactions
 * wait and the minter's nonce has not moved for PTS_CHAIN_WEDGED_SECONDS).
 */
export const mintingStateSchema = z
  .object({
    status: z.enum(['ok', 'queueing', 'wedged']),
    /** Whether this process holds the minter signer lock (the other replicas hand their rewards to it). */
    signer: z.boolean(),
    /** The minter's mint transactions sent and not yet final. */
    waitingTransactions: z.number().int(),
    /** When one of the minter's transactions last mined (its nonce on chain moved); null before any. */
    lastMinedAt: z.iso.datetime().nullable(),
  })
  .meta({ id: 'MintingState' });
export type MintingState = z.infer<typeof mintingStateSchema>;

/**
 * `GET /readyz`: 200 `ready` when the database answers (events are accepted; with the chain away their
 * rewards are queued), 503 `not_ready` otherwise. `GET /readyz/minting` answers the same body with 200 only
 * when minting works now too.
 */
export const readinessSchema = z
  .object({
    status: z.enum(['ready', 'not_ready']),
    timestamp: z.iso.datetime(),
    database: connectionStateSchema,
    blockchain: connectionStateSchema,
    /** Whether rewards are minted now (not part of `status`: a load balancer keeps sending events). */
    minting: mintingStateSchema.optional(),
  })
  .meta({ id: 'Readiness' });
export type Readiness = z.infer<typeof readinessSchema>;
