import { type Hex, keccak256 } from 'viem';
import { type ChainTxRow, confirmedTxsAt, reopenConfirmedTx } from '../chain-txs.repository.ts';
import { enqueueBroadcast } from './broadcast.ts';
import type { MinterContext } from './context.ts';

// Gap filling: nonces below the lowest open transaction that the node has never seen.

/** Nonces burned per tracking pass when closing a gap; a larger gap closes over several passes. */
const MAX_GAP_FILL = 100n;

/**
 * Nonces below our lowest open transaction that the node has never seen (a chain reset or a state file
 * older than the database) block every later transaction forever. A nonce whose batch the ledger holds
 * `confirmed` is a mint the chain lost: that batch goes back to the outbox and its own signed bytes fill the
 * nonce (they can mine once at most). Only nonces no live batch owns (none, or a failed one whose rewards
 * were re-queued) are burned with 0-value self-transfers, which mint nothing whichever way they land. All go
 * out in nonce order. True when the gap up to `lowest` is closed.
 */
export async function fillNonceGap(
  ctx: MinterContext,
  params: { lowest: ChainTxRow | undefined; stuck: (tx: ChainTxRow) => boolean },
): Promise<boolean> {
  const { lowest, stuck } = params;
  const { publicClient, account, sender } = ctx;
  if (!lowest || !stuck(lowest)) return false;
  const pendingNonce = BigInt(
    await publicClient.getTransactionCount({ address: account.address, blockTag: 'pending' }),
  );
  if (pendingNonce >= lowest.nonce) return false;
  const fees = await sender.fees(true);
  const last = lowest.nonce - pendingNonce > MAX_GAP_FILL ? pendingNonce + MAX_GAP_FILL : lowest.nonce;
  const nonces: bigint[] = [];
  for (let nonce = pendingNonce; nonce < last; nonce++) nonces.push(nonce);
  const lostConfirmed = new Map(
    (await confirmedTxsAt(ctx.db, ctx.chainId, ctx.signer, nonces)).map((tx) => [BigInt(tx.nonce), tx] as const),
  );
  if (lostConfirmed.size > 0) {
    ctx.onRollback?.(`the chain lost ${lostConfirmed.size} confirmed mintBatch transaction(s) below its nonce gap`);
  }
  ctx.log.warn(
    { from: Number(pendingNonce), to: Number(lowest.nonce), reopening: lostConfirmed.size },
    'nonce gap below the oldest open mintBatch; re-sending lost batches and burning the other nonces',
  );
  for (const nonce of nonces) {
    const lost = lostConfirmed.get(nonce);
    if (lost) {
      await reopenConfirmedTx(ctx.db, lost, `not on chain: nonce ${nonce} is above the chain's`, ctx.clock.now());
      const raw = lost.raw_tx as Hex;
      const sent = await enqueueBroadcast(ctx, { chainTxId: lost.id, hash: keccak256(raw), raw });
      if (sent === 'failed') throw new Error(`re-sending the lost mintBatch at nonce ${nonce} failed`);
      continue;
    }
    const { raw } = await sender.sign({
      nonce,
      to: account.address,
      data: '0x',
      value: 0n,
      gas: 21_000n,
      maxFeePerGas: fees.maxFeePerGas,
      maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
    });
    const sent = await sender.send(raw);
    if (sent.outcome === 'failed') throw sent.error;
    ctx.metrics.mintTransactions.inc({ result: 'gap_filled' });
  }
  return last === lowest.nonce;
}
