import { AppError } from '@pts/shared';
import { createRelayerContext, loadRelayRow, type RelayerSenderDeps, toTransaction, UUID } from './relay/context.ts';
import { readGasByBrand } from './relay/gas-usage.ts';
import { simulate } from './relay/limits.ts';
import {
  createRelayerRun,
  ensureRelayerElected,
  notifyRelayWaiters,
  relayWaitDeps,
  startRelayer,
  stopRelayer,
} from './relay/run.ts';
import { submitRelay } from './relay/submit.ts';
import { waitForRelay } from './relay/wait.ts';
import type { RelayerSender } from './relayer.types.ts';

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
 * chain/relay/ (its process state in relay/run.ts); this composes them.
 */
export function createRelayerSender(deps: RelayerSenderDeps): RelayerSender {
  const { account } = deps;
  if (deps.minterAddress && deps.minterAddress.toLowerCase() === account.address.toLowerCase()) {
    throw new Error(
      'The relayer key is the minter key: set PTS_RELAYER_PRIVATE_KEY to a key of its own (they must not share nonces)',
    );
  }
  const run = createRelayerRun(deps);
  const ctx = createRelayerContext(deps, (id) => notifyRelayWaiters(run, id));
  const waitDeps = relayWaitDeps(ctx, run);
  return {
    address: account.address,
    simulate: (request) => simulate(ctx, request),
    submit: (request) => submitRelay(ctx, request, () => ensureRelayerElected(deps, ctx, run)),
    waitFor: (id, timeoutMs) => waitForRelay(ctx, waitDeps, id, timeoutMs),
    async get(id) {
      if (!UUID.test(id)) return undefined;
      const row = await loadRelayRow(ctx, id);
      return row ? toTransaction(row, account.address) : undefined;
    },
    gasByBrand: (brandId) => readGasByBrand(ctx.db, ctx.chainId, brandId),
    start: () => startRelayer(ctx, run),
    stop: () => stopRelayer(ctx, run),
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
