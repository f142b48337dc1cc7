import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

/** Prometheus metrics of one app instance (own registry: tests run several apps in one process). */
export interface Metrics {
  registry: Registry;
  httpRequests: Counter<'method' | 'route' | 'status'>;
  httpDuration: Histogram<'method' | 'route' | 'status'>;
  eventsProcessed: Counter<'outcome'>;
  mintBatchSize: Histogram;
  eventBatchSize: Histogram;
  mintTransactions: Counter<'result'>;
  rewardsByStatus: Gauge<'status'>;
  nonceLag: Gauge;
  /** Scrapes where sampling the database failed (the gauges it feeds are left empty that scrape). */
  scrapeSampleFailures: Counter;
  /** Relayed transactions by status (queued, submitted, confirmed, failed, replaced, send_failed, refused_gas_price). */
  relayTransactions: Counter<'status'>;
  /** Gas used by relayed transactions, by the brand charged for it. */
  relayGasUsed: Counter<'brand'>;
  /** Chain–ledger drift found by the reconciler, in token units: `missing` on chain, or `unexpected` there. */
  ledgerDrift: Gauge<'kind'>;
  /** Rewards the reconciler put back in the outbox that are not confirmed again yet. */
  reconcilerRestoring: Gauge;
  /** Confirmed mint transactions the reconciler found missing on chain and reopened. */
  reconcilerReopened: Counter;
  /** Reconciler passes by result (ok, drift, error). */
  reconcilerRuns: Counter<'result'>;
}

export function createMetrics(options: { defaultMetrics?: boolean } = {}): Metrics {
  const registry = new Registry();
  if (options.defaultMetrics) collectDefaultMetrics({ register: registry, prefix: 'pts_' });
  return {
    registry,
    httpRequests: new Counter({
      name: 'pts_http_requests_total',
      help: 'HTTP requests by route template, method and status',
      labelNames: ['method', 'route', 'status'],
      registers: [registry],
    }),
    httpDuration: new Histogram({
      name: 'pts_http_request_duration_seconds',
      help: 'HTTP request latency by route template, method and status',
      labelNames: ['method', 'route', 'status'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    }),
    eventsProcessed: new Counter({
      name: 'pts_events_total',
      help: 'Events handled, by outcome (rewarded or the rejection code)',
      labelNames: ['outcome'],
      registers: [registry],
    }),
    mintBatchSize: new Histogram({
      name: 'pts_mint_batch_size',
      help: 'Rewards carried per mintBatch transaction',
      buckets: [1, 2, 5, 10, 20, 50, 100, 200, 500],
      registers: [registry],
    }),
    eventBatchSize: new Histogram({
      name: 'pts_event_batch_size',
      help: 'Events judged and written per accept-path transaction (group commit)',
      buckets: [1, 2, 4, 8, 16, 32, 64, 128],
      registers: [registry],
    }),
    mintTransactions: new Counter({
      name: 'pts_mint_transactions_total',
      help: 'Mint transactions by result (sent, confirmed, reverted, replaced, send_failed)',
      labelNames: ['result'],
      registers: [registry],
    }),
    rewardsByStatus: new Gauge({
      name: 'pts_rewards',
      help: 'Reward mints by status (pending, submitted, confirmed, failed), sampled at scrape',
      labelNames: ['status'],
      registers: [registry],
    }),
    nonceLag: new Gauge({
      name: 'pts_minter_nonce_lag',
      help: 'Nonces the minter has used that the chain has not yet confirmed',
      registers: [registry],
    }),
    scrapeSampleFailures: new Counter({
      name: 'pts_metrics_sample_failures_total',
      help: 'Scrapes of /metrics where sampling reward_mints failed',
      registers: [registry],
    }),
    relayTransactions: new Counter({
      name: 'pts_relay_transactions_total',
      help: 'Relayed transactions by status (queued, submitted, confirmed, failed, replaced, send_failed, refused_gas_price)',
      labelNames: ['status'],
      registers: [registry],
    }),
    relayGasUsed: new Counter({
      name: 'pts_relay_gas_used_total',
      help: 'Gas used by relayed transactions, by the brand charged for it',
      labelNames: ['brand'],
      registers: [registry],
    }),
    ledgerDrift: new Gauge({
      name: 'pts_chain_ledger_drift',
      help: 'Reward tokens the ledger calls confirmed that the chain lacks (kind=missing), or the chain holds beyond what the ledger signed (kind=unexpected), at the last reconciler pass',
      labelNames: ['kind'],
      registers: [registry],
    }),
    reconcilerRestoring: new Gauge({
      name: 'pts_reconciler_restoring_rewards',
      help: 'Rewards the reconciler put back in the outbox (their transaction was not on chain) that are not confirmed again yet',
      registers: [registry],
    }),
    reconcilerReopened: new Counter({
      name: 'pts_reconciler_reopened_transactions_total',
      help: 'Confirmed mint transactions the reconciler found missing on chain and put back in the outbox',
      registers: [registry],
    }),
    reconcilerRuns: new Counter({
      name: 'pts_reconciler_runs_total',
      help: 'Chain–ledger reconciler passes by result (ok, drift, error)',
      labelNames: ['result'],
      registers: [registry],
    }),
  };
}
