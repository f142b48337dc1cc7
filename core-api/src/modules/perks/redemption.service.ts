import { randomInt, randomUUID } from 'node:crypto';
import {
  AppError,
  type Clock,
  type PerkRedemptionInput,
  type PerkRedemptionResponse,
  parsePlatformIdentity,
} from '@pts/shared';
import { type Selectable, sql } from 'kysely';
import type { Logger } from 'pino';
import { type Address, encodeFunctionData, type Hex, isAddressEqual, parseSignature } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { perkNFTAbi, pointsSaleAbi, rewardTokenAbi } from '../../chain/artifacts/index.ts';
import type { ChainPublicClient } from '../../chain/deploy.ts';
import { chainNowSeconds, PERMIT_TYPES } from '../../chain/permit-types.ts';
import type { RelayerSender, RelayTransaction } from '../../chain/relayer.types.ts';
import type { Database } from '../../db/database.ts';
import type { PerkRedemptionsTable } from '../../db/schema.ts';
import { resolveAccountKey } from '../accounts/accounts.service.ts';
import { recordActivities } from '../leaderboards/activity.repository.ts';
import { perkTierRequirement } from '../tiers/tiers.repository.ts';
import type { ConstraintChecker } from './constraints/constraint-checker.ts';
import type { PerkRow } from './perks.repository.ts';
import { perkNotFound } from './perks.service.ts';
import { judgeRedemption, type RedemptionFacts, redemptionRefused, redemptionTermsOf } from './redemption-rule.ts';

/** The contracts a redemption touches. */
export interface RedemptionContracts {
  rewardToken: Address;
  perkNft?: Address | undefined;
  pointsSale?: Address | undefined;
}

/** What perk redemption needs (explicit, no singletons). */
export interface RedemptionDeps {
  db: Database;
  clock: Clock;
  logger?: Logger | undefined;
  relayer: RelayerSender;
  publicClient: ChainPublicClient;
  contracts: RedemptionContracts;
  constraints?: ConstraintChecker | undefined;
  /**
   * The private key of a user's custodial wallet (local HD wallets: `privateKeyForUser`); undefined when the
   * wallets are not custodial here (Privy: users sign through Privy).
   */
  custodialKey?: ((userId: bigint) => Hex) | undefined;
  /** `local` or `privy` (PTS_IDENTITY_PROVIDER). */
  identityProvider: string;
  /** How long to wait for the claim's receipt before answering `pending` (PTS_RELAYER_WAIT_MS). */
  waitMs: number;
}

/** Redeem response with the HTTP status it goes with (200 confirmed, 202 sent but not mined within the wait). */
export interface RedemptionOutcome {
  status: 200 | 202;
  body: PerkRedemptionResponse;
}

/** Characters of confirmation codes: no 0/O, 1/I/L, so a code read aloud or typed is unambiguous. */
export const CONFIRMATION_ALPHABET = '23456789ABCDEFGHJKMNPQRSTUVWXYZ';
/** `PTS-XXXX-XXXX` over CONFIRMATION_ALPHABET. */
export const CONFIRMATION_CODE_PATTERN = /^PTS-[2-9A-HJKMNP-Z]{4}-[2-9A-HJKMNP-Z]{4}$/;
const PERMIT_TTL_SECONDS = 600;
/** A reservation whose claim was never sent (the process died) stops counting after this. */
const ABANDONED_RESERVATION_MS = 10 * 60_000;
/** How long a `pending` answer's claim is followed in the background (the next redemption catches up later). */
const FOLLOW_UP_MS = 10 * 60_000;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A fresh confirmation code from the CSPRNG: `PTS-` and two groups of four (31^8 ≈ 8.5·10^11 codes). */
export function newConfirmationCode(): string {
  const group = () => Array.from({ length: 4 }, () => CONFIRMATION_ALPHABET[randomInt(CONFIRMATION_ALPHABET.length)]);
  return `PTS-${group().join('')}-${group().join('')}`;
}

/** The custodial signer of a wallet provider: its `privateKeyForUser` when it has one (the local HD adapter). */
export function custodialKeyOf(wallets: unknown): ((userId: bigint) => Hex) | undefined {
  const candidate = (wallets as { privateKeyForUser?: unknown } | undefined)?.privateKeyForUser;
  if (typeof candidate !== 'function') return undefined;
  return (userId) => candidate.call(wallets, userId) as Hex;
}

/** The brand's perk by its uuid or integer id; 404 for an unknown perk or another brand's. */
export async function findBrandPerk(db: Database, brandId: string, perkRef: string | number): Promise<PerkRow> {
  const text = String(perkRef);
  let query = db.selectFrom('perks').selectAll();
  query = UUID.test(text) ? query.where('public_id', '=', text.toLowerCase()) : query.where('id', '=', BigInt(text));
  const row = await query.executeTakeFirst();
  if (!row || row.brand_id !== brandId) throw perkNotFound(text);
  return row;
}

/**
 * The perk redemption service (docs/perks.md "Redeeming a perk"): `redeem` checks and pays for one perk with
 * the user's custodial wallet. Claims of one wallet are sent one after another from this process (each permit
 * signs the token's next nonce); the money and limit checks hold across processes through a row lock.
 */
export function createRedemptionService(deps: RedemptionDeps) {
  const walletQueues = new Map<string, Promise<unknown>>();
  const inWalletQueue = <T>(wallet: string, work: () => Promise<T>): Promise<T> => {
    const previous = walletQueues.get(wallet) ?? Promise.resolve();
    const next = previous.then(work, work);
    const tail = next.catch(() => undefined);
    walletQueues.set(wallet, tail);
    void tail.then(() => {
      if (walletQueues.get(wallet) === tail) walletQueues.delete(wallet);
    });
    return next;
  };

  const read = <T>(address: Address, abi: readonly unknown[], functionName: string, args: unknown[]) =>
    deps.publicClient.readContract({ address, abi: abi as never, functionName, args } as never) as Promise<T>;

  const contractsOrFail = () => {
    const { perkNft, pointsSale, rewardToken } = deps.contracts;
    if (!perkNft || !pointsSale) {
      throw new AppError(
        'SERVICE_UNAVAILABLE',
        'Perk redemption needs the PerkNFT and PointsSale contracts: set PTS_PERK_NFT_ADDRESS and PTS_POINTS_SALE_ADDRESS (or let the platform deploy them)',
      );
    }
    return { perkNft, pointsSale, rewardToken };
  };

  /** Marks a redemption confirmed and logs its activity, in one transaction (a replay records nothing twice). */
  const confirm = async (redemptionId: string, hash: string | null): Promise<void> => {
    const now = deps.clock.now();
    await deps.db.transaction().execute(async (trx) => {
      const row = await trx
        .updateTable('perk_redemptions')
        .set({ status: 'confirmed', tx_hash: hash, error: null, updated_at: now })
        .where('id', '=', redemptionId)
        .where('status', '=', 'pending')
        .returningAll()
        .executeTakeFirst();
      if (!row) return;
      const perk = await trx
        .selectFrom('perks')
        .select(['public_id', 'name', 'category'])
        .where('id', '=', row.perk_id)
        .executeTakeFirstOrThrow();
      const detail = {
        perkId: Number(row.perk_id),
        perkUuid: perk.public_id,
        perkName: perk.name,
        category: perk.category,
        confirmationCode: row.confirmation_code,
        transactionHash: hash,
      };
      const common = { brandId: row.brand_id, accountKey: row.user_key, platform: row.platform, occurredAt: now };
      await recordActivities(
        trx,
        [
          { ...common, kind: 'claimed', amount: 0n, ref: row.id, detail },
          { ...common, kind: 'spent', amount: row.cost, ref: row.id, detail },
        ],
        now,
      );
    });
  };

  const fail = (redemptionId: string, error: string) =>
    deps.db
      .updateTable('perk_redemptions')
      .set({ status: 'failed', error: error.slice(0, 500), updated_at: deps.clock.now() })
      .where('id', '=', redemptionId)
      .where('status', '=', 'pending')
      .execute();

  /** Brings the wallet's pending redemptions up to date from the relayer (a `pending` answer may since be mined). */
  const refreshPending = async (wallet: string): Promise<void> => {
    const rows = await deps.db
      .selectFrom('perk_redemptions')
      .select(['id', 'relay_tx_id', 'created_at'])
      .where('wallet_address', '=', wallet)
      .where('status', '=', 'pending')
      .execute();
    const now = deps.clock.now().getTime();
    for (const row of rows) {
      if (!row.relay_tx_id) {
        if (now - new Date(row.created_at).getTime() > ABANDONED_RESERVATION_MS) {
          await fail(row.id, 'abandoned: the claim was never sent');
        }
        continue;
      }
      const tx = await deps.relayer.get(row.relay_tx_id);
      if (tx?.status === 'confirmed') await confirm(row.id, tx.hash);
      else if (tx?.status === 'failed') await fail(row.id, tx.error ?? 'the claim transaction failed');
    }
  };

  /**
   * Reserves the redemption under a lock on the user's row: live balance minus pending redemptions must cover
   * the cost, the supply and the per-user maximum count pending claims too. Concurrent redemptions of one
   * user (in any process) queue on the lock, so they can never overspend or exceed the maximum.
   */
  const reserve = async (input: {
    perk: PerkRow;
    userId: bigint;
    accountKey: string;
    platform: string;
    wallet: Address;
    perkNft: Address;
    idempotencyKey?: string | undefined;
  }): Promise<{ id: string; code: string } | { first: Selectable<PerkRedemptionsTable> }> => {
    const { perk, wallet, idempotencyKey } = input;
    const walletKey = wallet.toLowerCase();
    for (let attempt = 0; ; attempt++) {
      const id = randomUUID();
      const code = newConfirmationCode();
      try {
        const first = await deps.db.transaction().execute(async (trx) => {
          await trx.selectFrom('users').select('id').where('id', '=', input.userId).forUpdate().executeTakeFirst();
          // Under the member's lock: of concurrent requests with one key, the first reserves, the others see it.
          if (idempotencyKey) {
            const earlier = await trx
              .selectFrom('perk_redemptions')
              .selectAll()
              .where('brand_id', '=', perk.brand_id)
              .where('user_key', '=', input.accountKey)
              .where('idempotency_key', '=', idempotencyKey)
              .where('status', '<>', 'failed')
              .executeTakeFirst();
            if (earlier) return earlier;
          }
          const [mine, perkPending] = await Promise.all([
            trx
              .selectFrom('perk_redemptions')
              .select(['perk_id', 'cost'])
              .where('wallet_address', '=', walletKey)
              .where('status', '=', 'pending')
              .execute(),
            trx
              .selectFrom('perk_redemptions')
              .select((eb) => eb.fn.countAll<string>().as('count'))
              .where('perk_id', '=', perk.id)
              .where('status', '=', 'pending')
              .executeTakeFirstOrThrow(),
          ]);
          const [balance, totalClaimed, claimedByUser] = await Promise.all([
            read<bigint>(deps.contracts.rewardToken, rewardTokenAbi, 'balanceOf', [wallet]),
            read<bigint>(input.perkNft, perkNFTAbi, 'totalClaimed', [perk.id]),
            read<bigint>(input.perkNft, perkNFTAbi, 'claimedBy', [wallet, perk.id]),
          ]);
          const reserved = mine.reduce((sum, row) => sum + BigInt(row.cost), 0n);
          const facts: RedemptionFacts = {
            perk: redemptionTermsOf(perk, deps.clock.now()),
            spendable: balance > reserved ? balance - reserved : 0n,
            claimedTotal: totalClaimed + BigInt(perkPending.count),
            memberClaims: claimedByUser + BigInt(mine.filter((row) => row.perk_id === perk.id).length),
            tier: await perkTierRequirement(trx, perk.brand_id, perk.id, input.accountKey),
          };
          const decision = judgeRedemption(facts);
          if (!decision.allowed) {
            throw redemptionRefused(decision, facts, {
              perkId: perk.id,
              perkName: perk.name,
              member: input.accountKey,
              reservedByPending: reserved,
              window: { startsAt: perk.starts_at, endsAt: perk.ends_at },
            });
          }
          const now = deps.clock.now();
          await trx
            .insertInto('perk_redemptions')
            .values({
              id,
              brand_id: perk.brand_id,
              perk_id: perk.id,
              user_key: input.accountKey,
              platform: input.platform,
              wallet_address: walletKey,
              confirmation_code: code,
              status: 'pending',
              cost: perk.cost,
              idempotency_key: idempotencyKey ?? null,
              created_at: now,
              updated_at: now,
            })
            .execute();
          return undefined;
        });
        return first ? { first } : { id, code };
      } catch (error) {
        // A confirmation code collision (≈ 1 in 10^11): draw another. The idempotency index cannot collide
        // under the member's lock; if it did (a row written without it), the next attempt finds the first.
        const unique = (error as { code?: unknown; constraint?: unknown }) ?? {};
        if (unique.code === '23505' && attempt < 3) continue;
        throw error;
      }
    }
  };

  /** Signs the permit with the custodial key, simulates and sends claimPerkWithPermit, waits for the receipt. */
  const payAndClaim = async (input: {
    redemptionId: string;
    perk: PerkRow;
    privateKey: Hex;
    wallet: Address;
    rewardToken: Address;
    pointsSale: Address;
  }): Promise<RelayTransaction> => {
    const { perk, wallet } = input;
    const account = privateKeyToAccount(input.privateKey);
    const [nonce, domain] = await Promise.all([
      read<bigint>(input.rewardToken, rewardTokenAbi, 'nonces', [wallet]),
      read<readonly [Hex, string, string, bigint, Address]>(input.rewardToken, rewardTokenAbi, 'eip712Domain', []),
    ]);
    const deadline = BigInt(chainNowSeconds(deps.clock) + PERMIT_TTL_SECONDS);
    const signature = await account.signTypedData({
      domain: { name: domain[1], version: domain[2], chainId: Number(domain[3]), verifyingContract: domain[4] },
      types: PERMIT_TYPES,
      primaryType: 'Permit',
      message: { owner: wallet, spender: input.pointsSale, value: perk.cost, nonce, deadline },
    });
    const { r, s, v, yParity } = parseSignature(signature);
    const data = encodeFunctionData({
      abi: pointsSaleAbi,
      functionName: 'claimPerkWithPermit',
      args: [wallet, perk.id, deadline, Number(v ?? BigInt(yParity + 27)), r, s],
    });
    const simulation = await deps.relayer.simulate({ to: input.pointsSale, data, value: 0n });
    if (!simulation.ok) {
      await fail(input.redemptionId, `simulation: ${simulation.reason}`);
      throw revertError(perk, simulation.reason, simulation.errorName);
    }
    let tx: RelayTransaction;
    try {
      tx = await deps.relayer.submit({
        to: input.pointsSale,
        data,
        value: 0n,
        brandId: perk.brand_id,
        userAddress: wallet,
        purpose: 'perk-redeem',
        collectionId: perk.id,
      });
    } catch (error) {
      await fail(input.redemptionId, error instanceof Error ? error.message : String(error));
      throw error;
    }
    await deps.db
      .updateTable('perk_redemptions')
      .set({ relay_tx_id: tx.id, tx_hash: tx.hash, updated_at: deps.clock.now() })
      .where('id', '=', input.redemptionId)
      .execute();
    if (tx.status !== 'failed' && tx.status !== 'confirmed') tx = await deps.relayer.waitFor(tx.id, deps.waitMs);
    return tx;
  };

  /** A claim answered `pending`: confirmed (with its activity) or failed when the relayer settles it. */
  const followUp = async (redemptionId: string, txId: string): Promise<void> => {
    try {
      const tx = await deps.relayer.waitFor(txId, FOLLOW_UP_MS);
      if (tx.status === 'confirmed') await confirm(redemptionId, tx.hash);
      else if (tx.status === 'failed') await fail(redemptionId, tx.error ?? 'the claim transaction failed');
    } catch (error) {
      deps.logger?.warn({ err: error, redemptionId }, 'perk redemption follow-up failed; the next redemption retries');
    }
  };

  return {
    /** `POST /services/perks/redeem` after the brand signature is verified. */
    async redeem(input: PerkRedemptionInput): Promise<RedemptionOutcome> {
      if (deps.identityProvider === 'privy' || !deps.custodialKey) {
        throw new AppError(
          'NOT_IMPLEMENTED',
          'Perk redemption on behalf of a user needs custodial wallets; with PTS_IDENTITY_PROVIDER=privy users sign through Privy: have the user sign a permit in the app and claim through POST /relayer/relay',
          { reason: 'wallets_not_custodial', identityProvider: deps.identityProvider },
        );
      }
      const { perkNft, pointsSale, rewardToken } = contractsOrFail();
      const perk = await findBrandPerk(deps.db, input.brandId, input.perkId);
      // A linked identity spends from its account's wallet, whose key derives from the account's own user.
      const accountKey = await resolveAccountKey(deps.db, input.userIdentifier);
      const user = await deps.db
        .selectFrom('users')
        .select(['id', 'email', 'wallet_address'])
        .where('email', '=', accountKey)
        .executeTakeFirst();
      if (!user?.wallet_address) {
        throw new AppError(
          'NO_WALLET',
          `${input.userIdentifier} has no tokens yet: a user gets a wallet with their first reward`,
          { field: 'userIdentifier', value: input.userIdentifier, reason: 'no_wallet' },
        );
      }
      const privateKey = deps.custodialKey(user.id);
      const wallet = privateKeyToAccount(privateKey).address;
      if (!isAddressEqual(wallet, user.wallet_address as Address)) {
        throw new AppError(
          'NOT_IMPLEMENTED',
          `The wallet of ${input.userIdentifier} is not held by this platform's key store (it was created by another wallet provider), so it cannot be signed for here`,
          { reason: 'wallet_not_custodial' },
        );
      }
      const walletKey = wallet.toLowerCase();
      await refreshPending(walletKey);
      const platform = input.platform ?? parsePlatformIdentity(input.userIdentifier)?.platform ?? 'web';
      const reservation = await reserve({
        perk,
        userId: user.id,
        accountKey: user.email,
        platform,
        wallet,
        perkNft,
        idempotencyKey: input.idempotencyKey,
      });
      if ('first' in reservation) return replay(reservation.first, perk, platform, input.idempotencyKey ?? '');
      const { id, code } = reservation;

      let tx: RelayTransaction;
      try {
        await checkConstraints(deps, perk, walletKey);
        tx = await inWalletQueue(walletKey, () =>
          payAndClaim({ redemptionId: id, perk, privateKey, wallet, rewardToken, pointsSale }),
        );
      } catch (error) {
        await fail(id, error instanceof Error ? error.message : String(error));
        throw error;
      }
      if (tx.status === 'failed') {
        await fail(id, tx.error ?? 'the claim transaction failed');
        throw revertError(perk, tx.error ?? 'reverted', undefined, tx);
      }
      if (tx.status === 'confirmed') await confirm(id, tx.hash);
      else void followUp(id, tx.id);
      deps.logger?.info(
        { redemptionId: id, perkId: perk.id.toString(), brandId: perk.brand_id, status: tx.status, hash: tx.hash },
        'perk redeemed',
      );
      const confirmed = tx.status === 'confirmed';
      return {
        status: confirmed ? 200 : 202,
        body: {
          success: true,
          confirmationCode: code,
          perk: {
            id: perk.public_id,
            perkId: Number(perk.id),
            name: perk.name,
            cost: Number(perk.cost),
            category: perk.category,
          },
          redemptionId: id,
          status: confirmed ? 'confirmed' : 'pending',
          transactionHash: tx.hash,
          walletAddress: walletKey,
        },
      };
    },
  };
}

/**
 * The answer to a repeated idempotency key: the first redemption as it stands now (200 confirmed, 202 still
 * pending), marked `replayed`; nothing is reserved or spent. The same key for another perk or platform is 409.
 */
function replay(
  first: Selectable<PerkRedemptionsTable>,
  perk: PerkRow,
  platform: string,
  idempotencyKey: string,
): RedemptionOutcome {
  if (first.perk_id !== perk.id || first.platform !== platform) {
    throw new AppError(
      'CONFLICT',
      `Idempotency key "${idempotencyKey}" was already used by this brand for this member's redemption of another perk or on another platform (redemption ${first.id}): send a new key for a new redemption, or the same body to get the first answer again`,
      { field: 'idempotencyKey', reason: 'idempotency_key_reused', redemptionId: first.id },
    );
  }
  const confirmed = first.status === 'confirmed';
  return {
    status: confirmed ? 200 : 202,
    body: {
      success: true,
      confirmationCode: first.confirmation_code,
      perk: {
        id: perk.public_id,
        perkId: Number(perk.id),
        name: perk.name,
        cost: Number(first.cost),
        category: perk.category,
      },
      redemptionId: first.id,
      status: confirmed ? 'confirmed' : 'pending',
      transactionHash: first.tx_hash,
      walletAddress: first.wallet_address,
      replayed: true,
    },
  };
}

/** 403 NOT_ELIGIBLE naming the failing constraints; 503 when the perk has constraints and no checker runs here. */
async function checkConstraints(deps: RedemptionDeps, perk: PerkRow, wallet: string): Promise<void> {
  if (!deps.constraints) {
    const any = await deps.db
      .selectFrom('perk_constraints')
      .select(sql<number>`1`.as('one'))
      .where('perk_id', '=', perk.id)
      .executeTakeFirst();
    if (any) throw new AppError('SERVICE_UNAVAILABLE', 'Perk constraints cannot be checked in this process');
    return;
  }
  const verdict = await deps.constraints.check({ collectionId: perk.id, userAddress: wallet });
  if (verdict.eligible) return;
  const failing = verdict.results.filter((result) => !result.eligible);
  throw new AppError(
    'NOT_ELIGIBLE',
    `Not eligible for "${perk.name}": ${failing.map((result) => `${result.kind}: ${result.reason}`).join('; ')}`,
    {
      perkId: Number(perk.id),
      reason: 'not_eligible',
      failed: failing.map(({ constraintId, kind, reason }) => ({ constraintId, kind, reason })),
    },
  );
}

/** A claim the contracts refuse: the reasons callers can act on get their own code; nothing was spent. */
function revertError(perk: PerkRow, reason: string, errorName?: string, tx?: RelayTransaction): AppError {
  const name = errorName ?? /^(\w+)\(/.exec(reason)?.[1];
  const details = { perkId: Number(perk.id), reason, ...(tx?.hash ? { transactionHash: tx.hash } : {}) };
  switch (name) {
    case 'MaxSupplyExceeded':
      return new AppError('SOLD_OUT', `"${perk.name}" is sold out`, details);
    case 'MaxPerUserExceeded':
      return new AppError('CLAIM_LIMIT_REACHED', `The per-user limit of "${perk.name}" is reached`, details);
    case 'CollectionInactive':
      return new AppError('PERK_UNAVAILABLE', `"${perk.name}" is not active`, { ...details, reason: 'inactive' });
    case 'ERC20InsufficientBalance':
      return new AppError('INSUFFICIENT_BALANCE', `The balance does not cover "${perk.name}"`, details);
    default:
      return tx
        ? new AppError('TRANSACTION_FAILED', `The claim transaction failed: ${reason}; nothing was spent`, details)
        : new AppError('CONFLICT', `The claim would revert: ${reason}; nothing was sent or spent`, details);
  }
}

/** One per process (compose.ts): its wallet queues are what keep two claims of one wallet from racing. */
export type RedemptionService = ReturnType<typeof createRedemptionService>;
