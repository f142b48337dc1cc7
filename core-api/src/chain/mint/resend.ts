import type { Hex } from 'viem';
import { listOpenTxs } from '../chain-txs.repository.ts';
import type { SendOutcome } from '../tx-sender.ts';
import { enqueueBroadcast } from './broadcast.ts';
import type { MinterContext } from './context.ts';
import type { Sendable } from './replace.ts';

// Nonce order across the tracker, the signing paths and a failover. Nodes hold a transaction whose nonce
// arrives early until the gap closes, but an automine anvil can leave such a queue unmined for good (issue 26:
// 1,108 transactions after a failover). So whatever the minter sends again goes out in nonce order, queued
// while the signing lock is held: no newly signed batch (always a higher nonce) can slip in between.

/**
 * Queues these sends in nonce order under the signing lock, then waits for their outcomes (outside the
 * lock, so signing goes on meanwhile). Rows already queued or on their way are skipped.
 */
export async function sendInNonceOrder(ctx: MinterContext, txs: Sendable[]): Promise<SendOutcome[]> {
  if (txs.length === 0) return [];
  const ordered = [...txs].sort((a, b) => (a.nonce < b.nonce ? -1 : a.nonce > b.nonce ? 1 : 0));
  const outcomes = await ctx.sender.withSigningLock(async () =>
    ordered.filter((tx) => !ctx.broadcasting.has(tx.chainTxId)).map((tx) => enqueueBroadcast(ctx, tx)),
  );
  return Promise.all(outcomes);
}

/**
 * When this process starts signing (at start, or at its first signature after a failover), the open
 * transactions a previous signer left whose nonce the chain has not used are sent again, lowest nonce first,
 * before any batch of its own. Call holding the signing lock. Outcomes are recorded in the background.
 */
export async function resendOpenBeforeSigning(ctx: MinterContext): Promise<void> {
  const chainNonce = BigInt(
    await ctx.publicClient.getTransactionCount({ address: ctx.account.address, blockTag: 'latest' }),
  );
  const open = await listOpenTxs(ctx.db, ctx.chainId, ctx.signer);
  const waiting = open.filter((tx) => BigInt(tx.nonce) >= chainNonce && !ctx.broadcasting.has(BigInt(tx.id)));
  for (const tx of waiting) {
    void enqueueBroadcast(ctx, {
      chainTxId: BigInt(tx.id),
      hash: tx.current_hash as Hex,
      raw: tx.raw_tx as Hex,
    }).catch(() => undefined);
  }
  if (waiting.length > 0) {
    ctx.log.info(
      { transactions: waiting.length, fromNonce: Number(waiting[0]!.nonce) },
      'open mintBatch transactions sent again in nonce order before signing new ones',
    );
  }
}

/** Runs resendOpenBeforeSigning once per minter (again after a failure); call holding the signing lock. */
export async function ensureResentBeforeSigning(ctx: MinterContext): Promise<void> {
  if (ctx.resentOpen) return;
  try {
    await resendOpenBeforeSigning(ctx);
    ctx.resentOpen = true;
  } catch (error) {
    // The chain or the database is unreachable: signing fails the same way; the next signature tries again.
    ctx.log.warn({ err: error }, 'could not send open transactions again before signing');
  }
}
