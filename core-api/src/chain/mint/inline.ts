import { isAddress } from 'viem';
import type { Database } from '../../db/database.ts';
import type { InlineMinting, InlineMintRow, InlineMintSigner, MintSubmission } from '../minter.types.ts';
import { type Fees, shortError } from '../tx-sender.ts';
import { enqueueBroadcast, submissionAfterSend } from './broadcast.ts';
import type { MinterContext } from './context.ts';
import { ensureResentBeforeSigning } from './resend.ts';
import { noteSigned, type SignedBatch, signMintBatch } from './sign.ts';

// Inline minting: the event batcher begins an inline signing (the signing lock, the next nonce, the fees),
// signs its batch inside its own database transaction, and after the commit tells the minter, which sends the
// batch (in nonce order) and releases the lock. The batcher drives these steps itself: nothing here calls
// back into it (issue 34 §3). See Minter.beginInline.

/** An InlineMintSigner for one nonce: signs at most one batch into the caller's transaction. */
function inlineSigner(
  ctx: MinterContext,
  params: { nonce: bigint; fees: Fees },
  signed: { batch?: SignedBatch },
): InlineMintSigner {
  return {
    async sign(trx: Database, rows: (InlineMintRow & { amount: bigint })[]) {
      if (signed.batch) throw new Error('an inline signing signs one batch per transaction');
      if (rows.length === 0 || rows.length > ctx.config.PTS_MINT_BATCH_MAX) return undefined;
      if (rows.some((row) => !isAddress(row.walletAddress, { strict: false }))) return undefined;
      const recorded = await signMintBatch(ctx, trx, {
        rows: rows.map((row) => ({ wallet_address: row.walletAddress, amount: row.amount })),
        nonce: params.nonce,
        fees: params.fees,
        now: ctx.clock.now(),
      });
      signed.batch = { ...recorded, nonce: params.nonce, mintIds: rows.map((row) => row.id) };
      return { chainTxId: recorded.chainTxId, transactionHash: recorded.hash };
    },
  };
}

/** Sends the committed batch (queued while the signing lock is held, so sends stay in nonce order). */
function sendInline(ctx: MinterContext, batch: SignedBatch, waitMs: number): Promise<MintSubmission> {
  return new Promise<MintSubmission>((resolve) => {
    const timer = setTimeout(() => resolve({ status: 'pending' }), waitMs);
    let answered = false;
    const answer = (submission: MintSubmission) => {
      if (answered) return;
      answered = true;
      clearTimeout(timer);
      resolve(submission);
    };
    enqueueBroadcast(ctx, batch, (result) => answer(submissionAfterSend(batch, result))).catch((error: unknown) => {
      ctx.log.warn({ error: shortError(error) }, 'recording a broadcast failed');
      answer({ status: 'pending' });
    });
  });
}

/**
 * Takes the signing lock, the next nonce and the fees for one inline batch; `undefined` (lock released at
 * once) when this minter is stopped or the chain cannot be read: the caller's rows then go in `pending`. The
 * lock is held until the caller says how its transaction ended (`committed` or `rolledBack`).
 */
export function beginInline(ctx: MinterContext, defaultWaitMs: number): Promise<InlineMinting | undefined> {
  const { sender } = ctx;
  let released: Promise<void> = Promise.resolve();
  return new Promise<InlineMinting | undefined>((begun, failed) => {
    released = sender
      .withSigningLock(async () => {
        if (ctx.stopped) return begun(undefined);
        let nonce: bigint;
        let fees: Fees;
        try {
          nonce = await sender.nextNonce();
          fees = await sender.fees();
        } catch (error) {
          // The chain is unreachable: the rows go in `pending` and the minter's own path sends them later.
          ctx.log.warn(
            { error: shortError(error) },
            'cannot sign inline (nonce or fees unavailable); rewards stay pending',
          );
          return begun(undefined);
        }
        await ensureResentBeforeSigning(ctx);
        const signed: { batch?: SignedBatch } = {};
        // Held until the caller's transaction ended: the next signer waits for this nonce's fate.
        await new Promise<void>((ended) => {
          let open = true;
          const end = () => {
            open = false;
            ended();
          };
          begun({
            signer: inlineSigner(ctx, { nonce, fees }, signed),
            released: () => released,
            committed(options) {
              if (!open) throw new Error('this inline signing already ended');
              const batch = signed.batch;
              // Sent while the lock is still held, so sends stay in nonce order.
              let sent: Promise<MintSubmission> | undefined;
              if (batch) {
                noteSigned(ctx, batch, 'mintBatch signed inline');
                sent = sendInline(ctx, batch, options?.waitMs ?? defaultWaitMs);
              }
              end();
              return sent;
            },
            rolledBack(error) {
              if (!open) return;
              // Rolled back: the nonce was never used. A unique-key refusal means another signer took it.
              if ((error as { code?: string } | undefined)?.code === '23505') sender.forgetNonce();
              end();
            },
          });
        });
      })
      .catch(failed);
  });
}
