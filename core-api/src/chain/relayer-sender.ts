import { AppError } from '@pts/shared';
import type { SignerLock } from './minter.ts';
import { createRelayerContext, loadRelayRow, type RelayerSenderDeps, toTransaction, UUID } from './relay/context.ts';
import { readGasByBrand } from './relay/gas-usage.ts';
import { simulate } from './relay/limits.ts';
import { submitRelay } from './relay/submit.ts';
import { recoverRelay, trackRelayOnce } from './relay/track.ts';
import { waitForRelay } from './relay/wait.ts';
import type { RelayerSender } from './relayer.types.ts';
import { errorReason } from './tx-sender.ts';

export type { RelayerSenderConfig, RelayerSenderDeps } from './relay/context.ts';
export { readGasByBrand } from './relay/gas-usage.ts';
export { decodeRevert } from './relay/revert.ts';

/**
 * The relayer's transaction sender (docs/relayer.md "Transaction lifecycle"): one `relay_transactions` row
 * per transaction, written `queued` before anything else and updated with the signed raw transaction and its
 * hash before the broadcast, so a crash at any point leaves a row the next start can finish. Nonces are
 * allocated one at a time under an in-process lock, starting from max(chain pending count, highest recorded
 * nonce + 1). A poller follows receipts for every hash a row was signed with and re-signs rows that stay
 * unmined past PTS_RELAYER_STUCK_SECONDS with higher fees (same nonce). Each step is an action of its own in
 * chain/relay/; this composes them.
 */
export function createRelayerSender(deps: RelayerSenderDeps): RelayerSender {
  const { account } = deps;
  if (deps.minterAddress && deps.minterAddress.toLowerCase() === account.address.toLowerCase()) {
    throw new Error(
      'The relayer key is the minter key: set PTS_RELAYER_PRIVATE_KEY to a key of its own (they must not share nonces)',
    );
  }
  /** Waiters of `waitFor`: told the id of each row that reached a final state (no id: everyone, at stop). */
  const listeners = new Set<(id?: string) => void>();
  const ctx = createRelayerContext(deps, (id) => {
    for (const listener of [...listeners]) listener(id);
  });
  const { log } = ctx;
  let tracking: Promise<void> | undefined;
  let pollTimer: NodeJS.Timeout | undefined;
  let lock: SignerLock | null | undefined = deps.acquireLock ? undefined : { release: async () => {} };
  let lastTrackAt = Number.NEGATIVE_INFINITY;

  let electing: Promise<SignerLock | null> | undefined;
  /** One election at a time: concurrent first submits share it (a second lock attempt would fail against our own). */
  async function ensureElected(): Promise<void> {
    if (lock) return;
    electing ??= deps.acquireLock!().finally(() => {
      electing = undefined;
    });
    const acquired = await electing;
    if (acquired && !lock) {
      lock = acquired;
      log.info('holding the relayer signer lock');
    }
    if (!lock) {
      throw new AppError('SERVICE_UNAVAILABLE', 'Another process signs with the relayer key; retry on that instance', {
        signer: account.address,
      });
    }
  }

  /** One tracking pass at a time. */
  function track(): Promise<void> {
    if (tracking) return tracking;
    lastTrackAt = performance.now();
    tracking = trackRelayOnce(ctx).finally(() => {
      tracking = undefined;
    });
    return tracking;
  }

  /** A tracking pass, at most one per PTS_RECEIPT_POLL_MS however many callers wait. */
  function trackThrottled(): Promise<void> {
    if (tracking) return tracking;
    if (performance.now() - lastTrackAt < deps.config.PTS_RECEIPT_POLL_MS) return Promise.resolve();
    return track();
  }

  const waitDeps = {
    listen(listener: (id?: string) => void) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    trackThrottled,
  };

  return {
    address: account.address,
    simulate: (request) => simulate(ctx, request),
    submit: (request) => submitRelay(ctx, request, ensureElected),
    waitFor: (id, timeoutMs) => waitForRelay(ctx, waitDeps, id, timeoutMs),
    async get(id) {
      if (!UUID.test(id)) return undefined;
      const row = await loadRelayRow(ctx, id);
      return row ? toTransaction(row, account.address) : undefined;
    },
    gasByBrand: (brandId) => readGasByBrand(ctx.db, ctx.chainId, brandId),
    start() {
      if (pollTimer || ctx.stopped) return;
      recoverRelay(ctx).catch((error: unknown) => log.warn({ error: errorReason(error) }, 'relay recovery failed'));
      pollTimer = setInterval(() => {
        track().catch((error: unknown) => log.warn({ error: errorReason(error) }, 'receipt tracking failed'));
      }, deps.config.PTS_RECEIPT_POLL_MS);
      pollTimer.unref();
    },
    async stop() {
      ctx.stopped = true;
      if (pollTimer) clearInterval(pollTimer);
      pollTimer = undefined;
      ctx.notify();
      await tracking?.catch(() => undefined);
      await ctx.sender.drained();
      await lock?.release();
    },
  };
}

/**
 * The relayer of an instance that has no relayer key (PTS_CHAIN=rpc without PTS_RELAYER_PRIVATE_KEY, on an
 * instance without the `relayer` role): every call answers 503 saying why, so nothing signs by accident.
 */
export function createUnavailableRelayer(reason: string): RelayerSender {
  const refuse = async (): Promise<never> => {
    throw new AppError('SERVICE_UNAVAILABLE', `The relayer is not available: ${reason}`);
  };
  return {
    address: '0x0000000000000000000000000000000000000000',
    simulate: refuse,
    submit: refuse,
    waitFor: refuse,
    get: refuse,
    gasByBrand: refuse,
    start() {},
    async stop() {},
  };
}
