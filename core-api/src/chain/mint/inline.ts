import { isAddress } from 'viem';
import type { Database } from '../../db/database.ts';
import type { InlineMintRow, InlineMintSigner, MintSubmission } from '../minter.types.ts';
import { type Fees, shortError } from '../tx-sender.ts';
import { enqueueBroadcast, submissionAfterSend } from './broadcast.ts';
import type { MinterContext } from './context.ts';
import { ensureResentBeforeSigning } from './resend.ts';
import { noteSigned, type SignedBatch, signMintBatch } from './sign.ts';

// Inline minting: a request signs its batch inside its own database transaction, under the signing lock, and
// the batch is sent (in nonce order) right after the commit. See Minter.mintInline.

type InlineWork<T> = (signer: InlineMintSigner | undefined) => Promise<T>;

/** An InlineMintSigner for one nonce: signs at most one batch into the caller's transaction. */
function inlineSigner(
  ctx: MinterContext,
  params: { nonce: bigint; fees: Fees },
  signed: { batch?: SignedBatch },
): InlineMintSigner {
  return {
    async sign(trx: Database, rows: (InlineMintRow & { amount: bigint })[]) {
      if (signed.batch) throw new Error('mintInline signs one batch per transaction');
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

export function mintInline<T>(
  ctx: MinterContext,
  work: InlineWork<T>,
  waitMs: number,
): Promise<{ value: T; sent: Promise<MintSubmission> | undefined }> {
  const { sender } = ctx;
  return sender.withSigningLock(async () => {
    if (ctx.stopped) return { value: await work(undefined), sent: undefined };
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
      return { value: await work(undefined), sent: undefined };
    }
    await ensureResentBeforeSigning(ctx);
    const signed: { batch?: SignedBatch } = {};
    let value: T;
    try {
      value = await work(inlineSigner(ctx, { nonce, fees }, signed));
    } catch (error) {
      // Rolled back: the nonce was never used. A unique-key refusal means another signer took it.
      if ((error as { code?: string }).code === '23505') sender.forgetNonce();
      throw error;
    }
    const batch = signed.batch;
    if (!batch) return { value, sent: undefined };
    noteSigned(ctx, batch, 'mintBatch signed inline');
    return { value, sent: sendInline(ctx, batch, waitMs) };
  });
}
