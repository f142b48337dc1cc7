import { randomUUID } from 'node:crypto';
import {
  ADDRESS_PATTERN,
  AppError,
  type BrandPurchases,
  type Clock,
  type CreateCheckoutInput,
  type PaymentMintResponse,
  type PaymentWebhookResponse,
  type Purchase,
} from '@pts/shared';
import type { Logger } from 'pino';
import type { Minter, MintSubmission } from '../../chain/minter.types.ts';
import type { Config } from '../../config.ts';
import type { Database } from '../../db/database.ts';
import { findBrandByAddress, insertAuditEntry } from '../brands/brands.repository.ts';
import { enqueueWebhook } from '../webhooks/webhooks.outbox.ts';
import { formatCents, parseTokens, parseUsdToCents, tokensForCents } from './payment-amounts.ts';
import { type CheckoutSession, type PaymentProvider, withSessionIdPlaceholder } from './payment-provider.ts';
import {
  findMintProgress,
  findPayment,
  insertPaymentIfAbsent,
  insertPurchaseMint,
  listPurchaseRows,
  lockPayment,
  markPaymentCanceled,
  markPaymentFulfilled,
  markPaymentUnfulfillable,
  recordWebhookEvent,
  webhookEventSeen,
} from './payments.repository.ts';

export interface PaymentDeps {
  db: Database;
  clock: Clock;
  logger: Logger;
  minter: Pick<Minter, 'submit'>;
  provider: PaymentProvider;
  /** Block explorer base URL (`PTS_EXPLORER_URL`): `blockExplorer` is `<it>/tx/<hash>`. */
  explorerUrl: string;
  /** How long a request waits for the minter to send the transaction before answering `pending`. */
  mintWaitMs: number;
}

/** The payment dependencies out of the app's (the payment provider under `payments`). */
export function paymentDepsFrom(
  deps: { db: Database; clock: Clock; logger: Logger; minter: Minter; config: Config } & { payments: PaymentProvider },
): PaymentDeps {
  return {
    db: deps.db,
    clock: deps.clock,
    logger: deps.logger,
    minter: deps.minter,
    provider: deps.payments,
    explorerUrl: deps.config.PTS_EXPLORER_URL,
    mintWaitMs: deps.config.PTS_MINT_WAIT_MS,
  };
}

/**
 * Token purchases (spec 4.6, 4.7; docs/payments.md) for the payment routes, the admin API and the brand portal:
 * one per process (compose.ts), over the configured payment provider.
 */
export interface PaymentService {
  /** The payment provider (the local one also serves its hosted checkout page). */
  readonly provider: PaymentProvider;
  /** A hosted checkout for a brand buying tokens for its own wallet; with `actor`, in the brand's audit log. */
  createCheckout(
    input: CreateCheckoutInput,
    options?: { actor?: string | undefined },
  ): Promise<{ sessionId: string; checkoutUrl: string }>;
  /**
   * Mints the tokens of a paid checkout session once (idempotent). With `brandId` (the brand portal), another
   * brand's purchase answers NOT_FOUND, as an unknown one.
   */
  fulfil(sessionId: string, options?: { brandId?: string | undefined }): Promise<PaymentMintResponse>;
  /** A provider webhook: verified, deduplicated, then fulfilled like `fulfil`. */
  handleWebhook(rawBody: Buffer, signatureHeader: string | undefined): Promise<PaymentWebhookResponse>;
  /** A brand's purchases with their mints, and totals. */
  brandPurchases(brandId: string): Promise<BrandPurchases>;
  /** Marks a still-open payment canceled (the local checkout page's Cancel). */
  markCanceled(sessionId: string): Promise<void>;
}

export function createPaymentService(deps: PaymentDeps): PaymentService {
  return {
    provider: deps.provider,
    createCheckout: (input, options) => createCheckout(deps, input, options),
    async fulfil(sessionId, options = {}) {
      if (options.brandId !== undefined) {
        const purchase = await findPayment(deps.db, sessionId);
        if (purchase?.brand_id !== options.brandId) {
          throw new AppError('NOT_FOUND', `No purchase ${sessionId} of this brand`, { field: 'sessionId' });
        }
      }
      return fulfilPayment(deps, sessionId);
    },
    handleWebhook: (rawBody, signatureHeader) => handlePaymentWebhook(deps, rawBody, signatureHeader),
    brandPurchases: (brandId) => listBrandPurchases(deps, brandId),
    markCanceled: (sessionId) => markPaymentCanceled(deps.db, sessionId, deps.clock.now()),
  };
}

/** Checkout-session metadata keys (spec 4.7 rule 1), plus the buyer's email for the record. */
export const METADATA = {
  wallet: 'wallet',
  usdAmount: 'usd_amount',
  ptsAmount: 'pts_amount',
  userEmail: 'user_email',
} as const;

/** Webhook event types that can complete a purchase (spec 6, inbound). */
export const FULFILLING_EVENT_TYPES = new Set([
  'checkout.session.completed',
  'checkout.session.async_payment_succeeded',
]);

/** What a paid session buys, read from its metadata and checked against what was charged. */
export interface SessionOrder {
  wallet: `0x${string}`;
  usdCents: bigint;
  ptsAmount: bigint;
  currency: string;
  userEmail: string | null;
}

/**
 * Spec 4.7 rules 1–2 with exact integers: the metadata must name a wallet, `usd_amount` (dollars) and
 * `pts_amount` (tokens), `pts_amount` must equal `usd_amount` × 1000, and the session must have charged
 * exactly `usd_amount` in USD. Throws VALIDATION_ERROR (`invalid_session_metadata` or `amount_mismatch`).
 */
export function readSessionOrder(session: CheckoutSession): SessionOrder {
  const metadata = session.metadata;
  const missing = [METADATA.wallet, METADATA.usdAmount, METADATA.ptsAmount].filter((key) => !metadata[key]);
  if (missing.length > 0) {
    throw new AppError(
      'VALIDATION_ERROR',
      `Checkout session ${session.id} lacks metadata ${missing.join(', ')}; it was not created by create-checkout`,
      { reason: 'invalid_session_metadata', missing },
    );
  }
  const wallet = metadata[METADATA.wallet]!;
  const usdText = metadata[METADATA.usdAmount]!;
  const ptsText = metadata[METADATA.ptsAmount]!;
  if (!ADDRESS_PATTERN.test(wallet)) {
    throw new AppError('VALIDATION_ERROR', `Checkout session metadata wallet "${wallet}" is not an address`, {
      reason: 'invalid_session_metadata',
      field: 'wallet',
    });
  }
  const usdCents = parseUsdToCents(usdText);
  const ptsAmount = parseTokens(ptsText);
  if (usdCents === undefined || ptsAmount === undefined || usdCents === 0n) {
    throw new AppError(
      'VALIDATION_ERROR',
      `Checkout session metadata usd_amount "${usdText}" / pts_amount "${ptsText}" are not positive amounts (e.g. "10.00" and "10000")`,
      { reason: 'invalid_session_metadata', usdAmount: usdText, ptsAmount: ptsText },
    );
  }
  const expected = tokensForCents(usdCents);
  if (ptsAmount !== expected) {
    throw new AppError(
      'VALIDATION_ERROR',
      `Amount mismatch: pts_amount ${ptsText} is not usd_amount ${usdText} × 1000 = ${expected}`,
      { reason: 'amount_mismatch', usdAmount: usdText, ptsAmount: ptsText, expectedPtsAmount: expected.toString() },
    );
  }
  const currency = (session.currency ?? '').toLowerCase();
  if (currency !== 'usd') {
    throw new AppError('VALIDATION_ERROR', `Amount mismatch: the session was charged in "${currency}", not usd`, {
      reason: 'amount_mismatch',
      currency,
    });
  }
  if (session.amountTotal !== null && BigInt(session.amountTotal) !== usdCents) {
    throw new AppError(
      'VALIDATION_ERROR',
      `Amount mismatch: the session charged ${formatCents(BigInt(session.amountTotal))} USD but its metadata says usd_amount ${usdText}`,
      { reason: 'amount_mismatch', amountTotal: session.amountTotal, usdAmount: usdText },
    );
  }
  return {
    wallet: wallet.toLowerCase() as `0x${string}`,
    usdCents,
    ptsAmount,
    currency,
    userEmail: metadata[METADATA.userEmail] || null,
  };
}

/**
 * `POST /pts-api/create-checkout`: a hosted checkout for a brand buying tokens for its own wallet. With an
 * `actor` (a signed-in portal user) the checkout is in the brand's audit log; the public route has none.
 */
export async function createCheckout(
  deps: Pick<PaymentDeps, 'db' | 'clock' | 'provider'>,
  input: CreateCheckoutInput,
  options: { actor?: string | undefined } = {},
): Promise<{ sessionId: string; checkoutUrl: string }> {
  const brand = await findBrandByAddress(deps.db, input.brandId);
  if (!brand) {
    throw new AppError('BRAND_NOT_FOUND', `Brand ${input.brandId} is not registered; check brandId`, {
      field: 'brandId',
    });
  }
  const usdCents = BigInt(input.amount);
  const ptsAmount = tokensForCents(usdCents);
  // The provider call happens outside any transaction; the `created` row is only a record for the brand's
  // purchase list, so losing it to a crash costs nothing (fulfilment upserts it).
  const session = await deps.provider.createCheckoutSession({
    brandId: brand.address,
    brandName: brand.name,
    amountCents: input.amount,
    currency: input.currency,
    customerEmail: input.userEmail,
    successUrl: withSessionIdPlaceholder(input.successUrl),
    cancelUrl: input.cancelUrl,
    productName: `${ptsAmount} reward tokens for ${brand.name}`,
    metadata: {
      [METADATA.wallet]: brand.address,
      [METADATA.usdAmount]: formatCents(usdCents),
      [METADATA.ptsAmount]: ptsAmount.toString(),
      [METADATA.userEmail]: input.userEmail,
    },
  });
  const now = deps.clock.now();
  await insertPaymentIfAbsent(deps.db, {
    session_id: session.id,
    provider: deps.provider.name,
    brand_id: brand.address,
    wallet_address: brand.address,
    user_email: input.userEmail,
    usd_cents: usdCents,
    pts_amount: ptsAmount,
    currency: input.currency,
    status: 'created',
    created_at: now,
    updated_at: now,
  });
  if (options.actor) {
    await insertAuditEntry(deps.db, {
      actor: options.actor,
      action: 'payment.checkout',
      subject: brand.address,
      details: { sessionId: session.id, usdAmount: formatCents(usdCents), ptsAmount: ptsAmount.toString() },
      at: now,
    });
  }
  return { sessionId: session.id, checkoutUrl: session.url };
}

/**
 * The one fulfilment path (payment-mint, webhooks, the local page): re-fetch the session from the
 * provider (outside any transaction), check it, then in ONE transaction claim the payment row and commit
 * the pending mint (the outbox), then hand the mint to the minter with a bounded wait. A repeat finds the
 * row fulfilled and mints nothing. A crash after the commit leaves a pending mint the reward processor sends.
 */
export async function fulfilPayment(deps: PaymentDeps, sessionId: string): Promise<PaymentMintResponse> {
  const session = await deps.provider.retrieveSession(sessionId);
  if (!session) {
    throw new AppError('NOT_FOUND', `Checkout session ${sessionId} not found`, {
      reason: 'session_not_found',
      field: 'sessionId',
    });
  }
  if (session.paymentStatus !== 'paid') {
    throw new AppError('CONFLICT', `Payment not completed: payment status is ${session.paymentStatus}`, {
      reason: 'payment_not_completed',
      paymentStatus: session.paymentStatus,
      sessionStatus: session.status,
    });
  }
  let order: SessionOrder;
  try {
    order = readSessionOrder(session);
    const brand = await findBrandByAddress(deps.db, order.wallet);
    if (!brand) {
      throw new AppError('VALIDATION_ERROR', `Checkout session wallet ${order.wallet} is not a registered brand`, {
        reason: 'invalid_session_metadata',
        field: 'wallet',
      });
    }
  } catch (error) {
    if (error instanceof AppError) {
      // Money was taken but no tokens can follow: keep it visible to operators (status `paid` + reason).
      await markPaymentUnfulfillable(deps.db, session.id, error.message, deps.clock.now());
      deps.logger.warn({ sessionId: session.id, reason: error.details?.reason }, error.message);
    }
    throw error;
  }

  const now = deps.clock.now();
  const newMintId = randomUUID();
  const claim = await deps.db.transaction().execute(async (trx) => {
    await insertPaymentIfAbsent(trx, {
      session_id: session.id,
      provider: deps.provider.name,
      brand_id: order.wallet,
      wallet_address: order.wallet,
      user_email: order.userEmail,
      usd_cents: order.usdCents,
      pts_amount: order.ptsAmount,
      currency: order.currency,
      status: 'created',
      created_at: now,
      updated_at: now,
    });
    const row = await lockPayment(trx, session.id);
    if (!row) throw new Error(`payment ${session.id} vanished inside its own transaction`);
    if (row.status === 'fulfilled' && row.reward_mint_id) {
      return { fresh: false, mintId: row.reward_mint_id, paymentIntentId: row.payment_intent_id };
    }
    await insertPurchaseMint(trx, {
      id: newMintId,
      brandId: order.wallet,
      walletAddress: order.wallet,
      amount: order.ptsAmount,
      at: now,
    });
    await markPaymentFulfilled(trx, session.id, {
      brandId: order.wallet,
      walletAddress: order.wallet,
      usdCents: order.usdCents,
      ptsAmount: order.ptsAmount,
      currency: order.currency,
      paymentIntentId: session.paymentIntentId,
      rewardMintId: newMintId,
      paidAt: row.paid_at ?? now,
      at: now,
    });
    // The brand's outbound notification commits with the fulfilment (or not at all). The hash is not known
    // yet: the transaction is signed after this commit.
    await enqueueWebhook(trx, {
      brandId: order.wallet,
      type: 'payment.completed',
      data: {
        brandId: order.wallet,
        sessionId: session.id,
        amountTotal: Number(order.usdCents),
        currency: order.currency,
        ptsAmount: Number(order.ptsAmount),
        transactionHash: null,
        timestamp: now.getTime(),
      },
      at: now,
    });
    return { fresh: true, mintId: newMintId, paymentIntentId: session.paymentIntentId };
  });

  let mintStatus: PaymentMintResponse['mintStatus'];
  let txHash: string | undefined;
  if (claim.fresh) {
    const submission = await submitMint(deps, claim.mintId);
    mintStatus = submission.status;
    txHash = submission.transactionHash;
  } else {
    const progress = await findMintProgress(deps.db, claim.mintId);
    mintStatus = progress?.status ?? 'pending';
    txHash = progress?.txHash ?? undefined;
  }

  const usd = formatCents(order.usdCents);
  const message = !claim.fresh
    ? `Payment ${session.id} was already processed; no tokens were minted this time`
    : txHash
      ? `Minted ${order.ptsAmount} tokens to ${order.wallet} for ${usd} USD`
      : `Payment received: ${order.ptsAmount} tokens for ${usd} USD are queued for minting to ${order.wallet}`;
  return {
    success: true,
    message,
    ...(txHash ? { txHash, blockExplorer: explorerTxUrl(deps.explorerUrl, txHash) } : {}),
    walletAddress: order.wallet,
    usdAmount: Number(order.usdCents) / 100,
    ptsAmount: Number(order.ptsAmount),
    paymentIntentId: claim.paymentIntentId,
    ...(claim.fresh ? {} : { alreadyProcessed: true as const }),
    mintStatus,
  };
}

/** The reward row is committed: a failing or slow minter only delays the mint, never loses or repeats it. */
async function submitMint(deps: PaymentDeps, mintId: string): Promise<MintSubmission> {
  try {
    return await deps.minter.submit(mintId, { waitMs: deps.mintWaitMs });
  } catch (error) {
    deps.logger.warn({ err: error, mintId }, 'purchase mint not submitted now; the reward processor will send it');
    return { status: 'pending' };
  }
}

export function explorerTxUrl(explorerUrl: string, txHash: string): string {
  return `${explorerUrl.replace(/\/+$/, '')}/tx/${txHash}`;
}

/**
 * `POST /pts-api/payment-webhook`: verify, deduplicate by event id, and run the same fulfilment as
 * payment-mint on the session the event names (re-fetched: the payload is never trusted). Failures that a
 * retry cannot fix answer 200 with their outcome; transient ones throw (5xx) so the provider retries.
 */
export async function handlePaymentWebhook(
  deps: PaymentDeps,
  rawBody: Buffer,
  signatureHeader: string | undefined,
): Promise<PaymentWebhookResponse> {
  const event = deps.provider.verifyWebhook(rawBody, signatureHeader);
  if (!FULFILLING_EVENT_TYPES.has(event.type) || !event.sessionId) return { received: true, outcome: 'ignored' };
  if (await webhookEventSeen(deps.db, event.id)) return { received: true, outcome: 'duplicate' };
  let outcome: PaymentWebhookResponse['outcome'];
  try {
    const result = await fulfilPayment(deps, event.sessionId);
    outcome = result.alreadyProcessed ? 'already_processed' : 'fulfilled';
  } catch (error) {
    if (!(error instanceof AppError) || error.status >= 500) throw error;
    outcome = error.details?.reason === 'payment_not_completed' ? 'payment_not_completed' : 'rejected';
    deps.logger.info({ eventId: event.id, sessionId: event.sessionId, outcome }, error.message);
  }
  // Recorded after the work: a crash in between means a redelivery, which fulfilment answers as already done.
  await recordWebhookEvent(deps.db, {
    event_id: event.id,
    provider: deps.provider.name,
    type: event.type,
    session_id: event.sessionId,
    outcome,
    received_at: deps.clock.now(),
  });
  return { received: true, outcome };
}

/** `GET /admin/brands/:brandId/purchases`: every purchase with its mint, and totals. */
export async function listBrandPurchases(deps: Pick<PaymentDeps, 'db'>, brandId: string): Promise<BrandPurchases> {
  const brand = await findBrandByAddress(deps.db, brandId);
  if (!brand) {
    throw new AppError('BRAND_NOT_FOUND', `Brand ${brandId} is not registered; check brandId`, { field: 'brandId' });
  }
  const rows = await listPurchaseRows(deps.db, brandId);
  let fulfilled = 0;
  let usdCents = 0n;
  let ptsPurchased = 0n;
  let ptsMinted = 0n;
  let ptsConfirmed = 0n;
  const purchases: Purchase[] = rows.map((row) => {
    const cents = BigInt(row.usd_cents);
    const pts = BigInt(row.pts_amount);
    if (row.status === 'fulfilled') {
      fulfilled++;
      usdCents += cents;
      ptsPurchased += pts;
      if (row.mint_status === 'submitted' || row.mint_status === 'confirmed') ptsMinted += pts;
      if (row.mint_status === 'confirmed') ptsConfirmed += pts;
    }
    return {
      sessionId: row.session_id,
      provider: row.provider,
      status: row.status,
      usdAmount: formatCents(cents),
      usdCents: Number(cents),
      ptsAmount: Number(pts),
      userEmail: row.user_email,
      paymentIntentId: row.payment_intent_id,
      mintStatus: row.mint_status,
      txHash: row.tx_hash,
      lastError: row.last_error,
      createdAt: new Date(row.created_at).toISOString(),
      fulfilledAt: row.fulfilled_at ? new Date(row.fulfilled_at).toISOString() : null,
    };
  });
  return {
    success: true,
    brandId: brand.address,
    purchases,
    totals: {
      purchases: rows.length,
      fulfilled,
      usdAmount: formatCents(usdCents),
      usdCents: Number(usdCents),
      ptsPurchased: Number(ptsPurchased),
      ptsMinted: Number(ptsMinted),
      ptsConfirmed: Number(ptsConfirmed),
    },
  };
}
