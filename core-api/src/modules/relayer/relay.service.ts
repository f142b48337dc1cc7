import { randomUUID } from 'node:crypto';
import {
  AppError,
  RELAY_REQUIRED_FIELDS,
  type RelayRequest,
  type RelayResponse,
  type RelayTransactionView,
  relayRequestSchema,
} from '@pts/shared';
import type { Logger } from 'pino';
import { type Address, encodeFunctionData, getAddress, type Hex, isAddressEqual, parseGwei } from 'viem';
import { perkNFTAbi, pointsSaleAbi, rewardTokenAbi } from '../../chain/artifacts/index.ts';
import { type ChainPublicClient, findDeploymentTx } from '../../chain/deploy.ts';
import { chainNowSeconds } from '../../chain/permit-types.ts';
import type { BrandGasUsage, RelayerSender, RelayTransaction, RelayTxStatus } from '../../chain/relayer.types.ts';
import { readGasByBrand } from '../../chain/relayer-sender.ts';
import type { Config } from '../../config.ts';
import type { Database } from '../../db/database.ts';
import { describeIssues } from '../../http/validate.ts';
import type { AuthenticatedUser, IdentityProvider } from '../identity/identity-provider.ts';
import type { ConstraintChecker } from '../perks/constraints/constraint-checker.ts';
import { normalizeV, type PermitDomain, verifyPermit } from './permit.ts';
import { decodeRelayCall, type PermitParts, type RelayCall, type RelayContracts } from './relay-policy.ts';

/** What a relay needs to know from the chain (reads only; the sender does the writing). */
export interface RelayChainReader {
  /** A perk collection, or undefined when it does not exist. */
  collection(id: bigint): Promise<{ brand: Address; price: bigint; maxPerUser: bigint; active: boolean } | undefined>;
  claimedBy(user: Address, id: bigint): Promise<bigint>;
  allowance(owner: Address, spender: Address): Promise<bigint>;
  nonces(owner: Address): Promise<bigint>;
  permitDomain(): Promise<PermitDomain>;
  gasPrice(): Promise<bigint>;
}

/** Reads through a viem client; the token's EIP-712 domain is read once (`eip712Domain()`). */
export function createRelayChainReader(client: ChainPublicClient, contracts: RelayContracts): RelayChainReader {
  let domain: Promise<PermitDomain> | undefined;
  const perkNft = () => {
    if (!contracts.perkNft) throw new AppError('SERVICE_UNAVAILABLE', 'The perk NFT contract is not configured');
    return contracts.perkNft;
  };
  return {
    async collection(id) {
      const address = perkNft();
      const exists = await client.readContract({
        address,
        abi: perkNFTAbi,
        functionName: 'collectionExists',
        args: [id],
      });
      if (!exists) return undefined;
      const c = await client.readContract({ address, abi: perkNFTAbi, functionName: 'collection', args: [id] });
      return { brand: c.brand, price: c.price, maxPerUser: c.maxPerUser, active: c.active };
    },
    claimedBy: (user, id) =>
      client.readContract({ address: perkNft(), abi: perkNFTAbi, functionName: 'claimedBy', args: [user, id] }),
    allowance: (owner, spender) =>
      client.readContract({
        address: contracts.rewardToken,
        abi: rewardTokenAbi,
        functionName: 'allowance',
        args: [owner, spender],
      }),
    nonces: (owner) =>
      client.readContract({
        address: contracts.rewardToken,
        abi: rewardTokenAbi,
        functionName: 'nonces',
        args: [owner],
      }),
    permitDomain() {
      domain ??= client
        .readContract({ address: contracts.rewardToken, abi: rewardTokenAbi, functionName: 'eip712Domain' })
        .then(([, name, version, chainId, verifyingContract]) => ({
          name,
          version,
          chainId: Number(chainId),
          verifyingContract,
        }));
      domain.catch(() => {
        domain = undefined;
      });
      return domain;
    },
    gasPrice: () => client.getGasPrice(),
  };
}

export interface RelaySettings {
  /** Relay requests per user address per rolling hour (spec 4.9 rule 7). */
  userPerHour: number;
  /** How long to wait for the receipt before answering `pending`. */
  waitMs: number;
  maxGasLimit: number;
  /** Gas price cap in wei (spec 4.9 rule 6); above it the relay answers 503 and sends nothing. */
  maxGasPriceWei: bigint;
  /** Block explorer base URL (`<url>/tx/<hash>`). */
  explorerUrl: string;
}

export interface RelayServiceDeps {
  db: Database;
  clock: { now(): Date };
  logger: Logger;
  relayer: RelayerSender;
  identity: IdentityProvider;
  chain: RelayChainReader;
  contracts: RelayContracts;
  settings: RelaySettings;
  /** Perk constraints (docs/constraints.md): a perk claim is refused when the user does not meet them. */
  constraints?: ConstraintChecker | undefined;
}

/** The relay settings out of the process's config (PTS_RELAYER_*, PTS_EXPLORER_URL). */
export function relaySettingsOf(
  config: Pick<
    Config,
    | 'PTS_RELAYER_USER_PER_HOUR'
    | 'PTS_RELAYER_WAIT_MS'
    | 'PTS_RELAYER_MAX_GAS_LIMIT'
    | 'PTS_RELAYER_MAX_GAS_PRICE_GWEI'
    | 'PTS_EXPLORER_URL'
  >,
): RelaySettings {
  return {
    userPerHour: config.PTS_RELAYER_USER_PER_HOUR,
    waitMs: config.PTS_RELAYER_WAIT_MS,
    maxGasLimit: config.PTS_RELAYER_MAX_GAS_LIMIT,
    maxGasPriceWei: parseGwei(String(config.PTS_RELAYER_MAX_GAS_PRICE_GWEI)),
    explorerUrl: config.PTS_EXPLORER_URL,
  };
}

/** The gasless relay (spec 4.9, docs/relayer.md), for the relayer host's routes. */
export interface RelayService {
  /** The user behind `Authorization: Bearer <access token>`; 401 UNAUTHORIZED otherwise. */
  authenticate(authorization: string | undefined): Promise<AuthenticatedUser>;
  /** `POST /relay` after parsing and authentication; answers spec 2.6 and the per-user quota. */
  relay(user: AuthenticatedUser, request: RelayRequest): Promise<{ response: RelayResponse; quota: QuotaState }>;
  /** One of the user's relayed transactions; 404 for anyone else's. */
  getTransaction(user: AuthenticatedUser, id: string): Promise<RelayTransactionView>;
}

export function createRelayService(deps: RelayServiceDeps): RelayService {
  return {
    authenticate: (authorization) => authenticate(deps.identity, authorization),
    relay: (user, request) => relay(deps, user, request),
    getTransaction: (user, id) => getRelayTransaction(deps, user, id),
  };
}

/**
 * The relayer's records on this chain, read from the database only (so any instance answers, relayer key or
 * not): gas paid per brand (docs/relayer.md "Gas accounting") and where the platform deployed a contract.
 */
export interface RelayRecords {
  /** Gas the relayer paid per brand (one brand's when `brandId` is given). */
  gasByBrand(brandId?: string): Promise<BrandGasUsage[]>;
  /** The transaction that deployed the contract at `address`, when this platform deployed it. */
  deploymentTx(address: string): Promise<Hex | undefined>;
}

export function createRelayRecords(deps: { db: Database; chainId: number }): RelayRecords {
  return {
    gasByBrand: (brandId) => readGasByBrand(deps.db, deps.chainId, brandId),
    deploymentTx: (address) => findDeploymentTx(deps.db, deps.chainId, address),
  };
}

const HOUR_MS = 3_600_000;
/** A reservation whose request never got its transaction sent (the process died) stops counting after this. */
const ABANDONED_RESERVATION_MS = 10 * 60_000;

/** Spec 4.9 rule 1 then the formats: 400 MISSING_FIELDS listing what is absent, else 400 INVALID_FORMAT. */
export function parseRelayBody(body: unknown): RelayRequest {
  const record =
    body !== null && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
  const missing = RELAY_REQUIRED_FIELDS.filter(
    (field) => record[field] === undefined || record[field] === null || record[field] === '',
  );
  if (missing.length > 0) {
    throw new AppError('MISSING_FIELDS', `Missing required fields: ${missing.join(', ')}`, {
      required: [...RELAY_REQUIRED_FIELDS],
      missing,
      errors: missing.map((field) => `${field}: required`),
    });
  }
  const parsed = relayRequestSchema.safeParse(record);
  if (parsed.success) return parsed.data;
  const errors = describeIssues(parsed.error);
  const field = parsed.error.issues[0]?.path.join('.') || undefined;
  throw new AppError('INVALID_FORMAT', `Invalid relay request: ${errors.join('; ')}`, {
    errors,
    ...(field ? { field } : {}),
  });
}

/** Spec 5: `Authorization: Bearer <access token>`, verified on every request; 401 UNAUTHORIZED otherwise. */
export async function authenticate(
  identity: IdentityProvider,
  authorization: string | undefined,
): Promise<AuthenticatedUser> {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
  if (!match?.[1]) {
    throw new AppError('UNAUTHORIZED', 'Send the access token as Authorization: Bearer <token>', {
      reason: authorization ? 'malformed_authorization_header' : 'missing_token',
    });
  }
  return identity.verifyAccessToken(match[1]);
}

/** The transaction(s) a relay sends, after every check. */
interface RelayPlan {
  call: RelayCall;
  /** Sent first, in a transaction of its own (a permit for more than the price). */
  permitFirst?: { to: Address; data: Hex };
  to: Address;
  data: Hex;
  functionName: string;
  brandId: string | null;
  collectionId: bigint | undefined;
  /** Per-user claim limit to enforce atomically with the reservation. */
  claimLimit?: { collectionId: bigint; maxPerUser: bigint; onChain: bigint };
}

function publicStatus(status: RelayTxStatus): RelayResponse['status'] {
  if (status === 'confirmed') return 'confirmed';
  if (status === 'failed') return 'failed';
  return 'pending';
}

function explorerLink(base: string, hash: string): string {
  return `${base.replace(/\/+$/, '')}/tx/${hash}`;
}

function toNumberOrNull(value: bigint | null): number | null {
  return value === null ? null : Number(value);
}

function refuse(message: string, details: Record<string, unknown>): never {
  throw new AppError('VALIDATION_FAILED', message, details);
}

function permitFromBody(permit: NonNullable<NonNullable<RelayRequest['metadata']>['permit']>): PermitParts {
  return {
    owner: getAddress(permit.owner),
    spender: getAddress(permit.spender),
    value: BigInt(permit.value),
    deadline: BigInt(permit.deadline),
    v: permit.v,
    r: permit.r as Hex,
    s: permit.s as Hex,
  };
}

/** The claim's collection, or 403 saying why it cannot be claimed. */
async function claimableCollection(deps: RelayServiceDeps, collectionId: bigint) {
  const collection = await deps.chain.collection(collectionId);
  if (!collection) {
    refuse(`Perk collection ${collectionId} does not exist`, {
      reason: 'unknown_collection',
      collectionId: Number(collectionId),
    });
  }
  if (!collection.active) {
    refuse(`Perk collection ${collectionId} is not active`, {
      reason: 'collection_inactive',
      collectionId: Number(collectionId),
    });
  }
  return collection;
}

/** A perk claim's constraints (before any simulation): 403 VALIDATION_FAILED `not_eligible` naming the failing ones. */
async function checkClaimConstraints(deps: RelayServiceDeps, collectionId: bigint, user: Address): Promise<void> {
  if (!deps.constraints) return;
  let verdict: Awaited<ReturnType<ConstraintChecker['check']>>;
  try {
    verdict = await deps.constraints.check({ collectionId, userAddress: user.toLowerCase() });
  } catch (error) {
    // A collection made on chain without a catalogue row has no constraints.
    if (error instanceof AppError && error.code === 'PERK_NOT_FOUND') return;
    throw error;
  }
  if (verdict.eligible) return;
  const failed = verdict.results
    .filter((result) => !result.eligible)
    .map(({ constraintId, kind, reason }) => ({ constraintId, kind, reason }));
  refuse(
    `Not eligible for perk ${collectionId}: ${failed.map((result) => `${result.kind}: ${result.reason}`).join('; ')}`,
    { reason: 'not_eligible', collectionId: Number(collectionId), failed },
  );
}

/** Decides what to send: the permit handling of docs/relayer.md "Permits" and the claim-limit inputs. */
async function planRelay(deps: RelayServiceDeps, request: RelayRequest, user: Address): Promise<RelayPlan> {
  const call = decodeRelayCall(deps.contracts, {
    to: request.to as Address,
    data: request.data as Hex,
    userAddress: user,
  });
  const bodyPermit = request.metadata?.permit;
  const nowSeconds = chainNowSeconds(deps.clock);
  const pointsSale = deps.contracts.pointsSale;
  const plain = { call, to: call.to, data: request.data as Hex };

  if (bodyPermit && call.kind !== 'claimPerk') {
    refuse('metadata.permit only accompanies PointsSale.claimPerk; the call already carries its permit or needs none', {
      field: 'metadata.permit',
      function: call.kind,
    });
  }

  if (call.kind === 'permit') {
    await verifyPermit({
      permit: call.permit,
      userAddress: user,
      allowedSpenders: pointsSale ? [pointsSale] : [],
      nonce: await deps.chain.nonces(user),
      domain: await deps.chain.permitDomain(),
      nowSeconds,
    });
    return { ...plain, functionName: 'permit', brandId: null, collectionId: undefined };
  }

  if (call.kind === 'useCharge') {
    const collection = await deps.chain.collection(call.collectionId);
    return {
      ...plain,
      functionName: 'useCharge',
      brandId: collection ? collection.brand.toLowerCase() : null,
      collectionId: undefined,
    };
  }

  // A perk claim: claimPerk, claimPerkWithPermit, or claimPerk with metadata.permit.
  if (!pointsSale) throw new AppError('SERVICE_UNAVAILABLE', 'The points-sale contract is not configured');
  const collection = await claimableCollection(deps, call.collectionId);
  await checkClaimConstraints(deps, call.collectionId, user);
  const [onChain, allowance] = await Promise.all([
    deps.chain.claimedBy(user, call.collectionId),
    deps.chain.allowance(user, pointsSale),
  ]);
  const claim = {
    brandId: collection.brand.toLowerCase(),
    collectionId: call.collectionId,
    claimLimit: { collectionId: call.collectionId, maxPerUser: collection.maxPerUser, onChain },
  };
  const claimPerkData = encodeFunctionData({
    abi: pointsSaleAbi,
    functionName: 'claimPerk',
    args: [user, call.collectionId],
  });
  const permit: PermitParts | undefined =
    call.kind === 'claimPerkWithPermit'
      ? { ...call.permit, value: collection.price }
      : bodyPermit
        ? permitFromBody(bodyPermit)
        : undefined;
  // No permit, or the allowance already covers the price (e.g. someone submitted the permit first): a plain claim.
  if (!permit || allowance >= collection.price) {
    return { call, to: pointsSale, data: claimPerkData, functionName: 'claimPerk', ...claim };
  }
  await verifyPermit({
    permit,
    userAddress: user,
    allowedSpenders: [pointsSale],
    nonce: await deps.chain.nonces(user),
    domain: await deps.chain.permitDomain(),
    nowSeconds,
    minimumValue: collection.price,
  });
  if (permit.value === collection.price) {
    // One atomic transaction; a permit front-run between here and mining is tolerated by the contract.
    const data = encodeFunctionData({
      abi: pointsSaleAbi,
      functionName: 'claimPerkWithPermit',
      args: [user, call.collectionId, permit.deadline, normalizeV(permit.v), permit.r, permit.s],
    });
    return { call, to: pointsSale, data, functionName: 'claimPerkWithPermit', ...claim };
  }
  // A permit for more than the price (an allowance for several claims): permit first, then the claim.
  const permitData = encodeFunctionData({
    abi: rewardTokenAbi,
    functionName: 'permit',
    args: [permit.owner, permit.spender, permit.value, permit.deadline, normalizeV(permit.v), permit.r, permit.s],
  });
  return {
    call,
    permitFirst: { to: deps.contracts.rewardToken, data: permitData },
    to: pointsSale,
    data: claimPerkData,
    functionName: 'claimPerk',
    ...claim,
  };
}

/** Rate-limit headers of the per-user hourly quota. */
export interface QuotaState {
  limit: number;
  remaining: number;
  /** Unix seconds when the oldest counted request leaves the window. */
  reset: number;
}

/**
 * Brings in-flight claim rows of one user and collection up to date from the sender, so a claim that failed
 * after a `pending` answer stops counting; a reservation left behind by a dead process expires.
 */
async function refreshInFlightClaims(deps: RelayServiceDeps, user: string, collectionId: bigint): Promise<void> {
  const rows = await deps.db
    .selectFrom('relay_requests')
    .select(['id', 'status', 'tx_id', 'created_at'])
    .where('user_address', '=', user)
    .where('collection_id', '=', collectionId.toString())
    .where('status', 'in', ['reserved', 'submitted'])
    .execute();
  const now = deps.clock.now();
  for (const row of rows) {
    if (row.status === 'reserved') {
      if (now.getTime() - new Date(row.created_at).getTime() > ABANDONED_RESERVATION_MS) {
        await markRequest(deps, row.id, { status: 'failed', error: 'abandoned: no transaction was sent' });
      }
      continue;
    }
    if (!row.tx_id) continue;
    const tx = await deps.relayer.get(row.tx_id);
    if (tx && (tx.status === 'confirmed' || tx.status === 'failed')) {
      await markRequest(deps, row.id, { status: tx.status, tx_hash: tx.hash, error: tx.error });
    }
  }
}

async function markRequest(
  deps: Pick<RelayServiceDeps, 'db' | 'clock'>,
  id: string,
  update: {
    status: 'submitted' | 'confirmed' | 'failed' | 'rejected';
    tx_id?: string;
    tx_hash?: string | null;
    error?: string | null;
  },
): Promise<void> {
  await deps.db
    .updateTable('relay_requests')
    .set({ ...update, updated_at: deps.clock.now() })
    .where('id', '=', id)
    .execute();
}

/** What a reservation records and checks. */
export type ReservationPlan = Pick<RelayPlan, 'to' | 'functionName' | 'collectionId' | 'claimLimit'>;

/**
 * Reserves one relay for `user` atomically (docs/relayer.md "Quota and claim limit"): the user's quota row is
 * locked (upsert), the requests of the last hour are counted (429 at the limit), a claim's in-flight and
 * confirmed claims are counted against the collection's per-user maximum (409), and the reservation is
 * inserted — all in one transaction, so concurrent requests and other processes queue on the lock.
 */
export async function reserveRelay(
  deps: Pick<RelayServiceDeps, 'db' | 'clock' | 'settings'>,
  input: { user: string; userId: string; plan: ReservationPlan },
): Promise<{ id: string; quota: QuotaState }> {
  const now = deps.clock.now();
  const since = new Date(now.getTime() - HOUR_MS);
  const limit = deps.settings.userPerHour;
  return deps.db.transaction().execute(async (trx) => {
    await trx
      .insertInto('relay_quota')
      .values({ user_address: input.user, last_request_at: now })
      .onConflict((oc) => oc.column('user_address').doUpdateSet({ last_request_at: now }))
      .execute();
    const window = await trx
      .selectFrom('relay_requests')
      .select((eb) => [eb.fn.countAll<string>().as('count'), eb.fn.min('created_at').as('oldest')])
      .where('user_address', '=', input.user)
      .where('created_at', '>', since)
      .executeTakeFirstOrThrow();
    const used = Number(window.count);
    const oldest = window.oldest ? new Date(window.oldest as Date | string) : now;
    const reset = Math.ceil((oldest.getTime() + HOUR_MS) / 1000);
    if (used >= limit) {
      const retryAfter = Math.max(1, Math.ceil((oldest.getTime() + HOUR_MS - now.getTime()) / 1000));
      throw Object.assign(
        new AppError(
          'RATE_LIMIT_EXCEEDED',
          `Rate limit exceeded: at most ${limit} relayed transactions per hour per user address; retry in ${retryAfter} s`,
          {
            message: `Too many relayed transactions for ${input.user}`,
            reason: 'rate_limit_exceeded',
            cooldownSeconds: retryAfter,
            limit,
            windowSeconds: 3600,
          },
          { retryAfter },
        ),
        { quota: { limit, remaining: 0, reset } satisfies QuotaState },
      );
    }
    const claimLimit = input.plan.claimLimit;
    if (claimLimit && claimLimit.maxPerUser > 0n) {
      const claims = await trx
        .selectFrom('relay_requests')
        .select((eb) => eb.fn.countAll<string>().as('count'))
        .where('user_address', '=', input.user)
        .where('collection_id', '=', claimLimit.collectionId.toString())
        .where('status', 'in', ['reserved', 'submitted', 'confirmed'])
        .executeTakeFirstOrThrow();
      const recorded = BigInt(claims.count);
      const current = recorded > claimLimit.onChain ? recorded : claimLimit.onChain;
      if (current >= claimLimit.maxPerUser) {
        throw new AppError(
          'CLAIM_LIMIT_REACHED',
          `You already claimed perk collection ${claimLimit.collectionId} ${current} time(s); its limit is ${claimLimit.maxPerUser} per user`,
          {
            collectionId: Number(claimLimit.collectionId),
            currentClaims: Number(current),
            maxPerUser: Number(claimLimit.maxPerUser),
          },
        );
      }
    }
    const id = randomUUID();
    await trx
      .insertInto('relay_requests')
      .values({
        id,
        user_address: input.user,
        user_id: input.userId,
        to_address: input.plan.to.toLowerCase(),
        function_name: input.plan.functionName,
        collection_id: input.plan.collectionId === undefined ? null : input.plan.collectionId.toString(),
        status: 'reserved',
        created_at: now,
        updated_at: now,
      })
      .execute();
    return { id, quota: { limit, remaining: Math.max(0, limit - used - 1), reset } };
  });
}

/** Quota headers a 429 carries (set on the error by `reserve`). */
export function quotaOf(error: unknown): QuotaState | undefined {
  return (error as { quota?: QuotaState })?.quota;
}

function transactionFailed(tx: RelayTransaction, what: string): AppError {
  return new AppError('TRANSACTION_FAILED', `The ${what} transaction failed on-chain: ${tx.error ?? 'reverted'}`, {
    id: tx.id,
    transactionHash: tx.hash,
    reason: tx.error ?? 'reverted',
    status: tx.status,
  });
}

/** Simulates, sends and waits for one transaction of a relay; throws 403 on a failed simulation, 500 on a revert. */
async function sendOne(
  deps: RelayServiceDeps,
  input: {
    requestId: string;
    to: Address;
    data: Hex;
    gasLimit: bigint | undefined;
    brandId: string | null;
    user: Address;
    purpose: string;
    collectionId: bigint | undefined;
    functionName: string;
    final: boolean;
  },
): Promise<RelayTransaction> {
  const simulation = await deps.relayer.simulate({
    to: input.to,
    data: input.data,
    value: 0n,
    ...(input.gasLimit !== undefined ? { gasLimit: input.gasLimit } : {}),
  });
  if (!simulation.ok) {
    await markRequest(deps, input.requestId, { status: 'rejected', error: simulation.reason });
    refuse(`The transaction would revert: ${simulation.reason}; nothing was sent`, {
      reason: simulation.reason,
      ...(simulation.errorName ? { errorName: simulation.errorName } : {}),
      contract: input.to,
      function: input.functionName,
    });
  }
  let tx: RelayTransaction;
  try {
    tx = await deps.relayer.submit({
      to: input.to,
      data: input.data,
      value: 0n,
      ...(input.gasLimit !== undefined ? { gasLimit: input.gasLimit } : {}),
      brandId: input.brandId,
      userAddress: input.user,
      purpose: input.purpose,
      ...(input.collectionId !== undefined ? { collectionId: input.collectionId } : {}),
    });
  } catch (error) {
    await markRequest(deps, input.requestId, {
      status: 'failed',
      error: error instanceof Error ? error.message : String(error),
    });
    throw error;
  }
  await markRequest(deps, input.requestId, { status: 'submitted', tx_id: tx.id, tx_hash: tx.hash });
  if (tx.status !== 'failed') tx = await deps.relayer.waitFor(tx.id, deps.settings.waitMs);
  if (tx.status === 'failed') {
    await markRequest(deps, input.requestId, { status: 'failed', tx_hash: tx.hash, error: tx.error });
    throw transactionFailed(tx, input.functionName);
  }
  if (input.final && tx.status === 'confirmed') {
    await markRequest(deps, input.requestId, { status: 'confirmed', tx_hash: tx.hash });
  }
  return tx;
}

/** Refuses when the network's gas price is above the cap (spec 4.9 rule 6): 503, nothing sent. */
async function checkGasPrice(deps: RelayServiceDeps): Promise<void> {
  const price = await deps.chain.gasPrice();
  if (price > deps.settings.maxGasPriceWei) {
    throw new AppError(
      'SERVICE_UNAVAILABLE',
      `The network gas price (${price} wei) is above the relayer's cap (${deps.settings.maxGasPriceWei} wei); retry later`,
      { reason: 'gas_price_above_cap', gasPrice: price.toString(), cap: deps.settings.maxGasPriceWei.toString() },
      { retryAfter: 60 },
    );
  }
}

/** `POST /relay` after parsing and authentication (spec 4.9). Answers spec 2.6 and the per-user quota. */
export async function relay(
  deps: RelayServiceDeps,
  authUser: AuthenticatedUser,
  request: RelayRequest,
): Promise<{ response: RelayResponse; quota: QuotaState }> {
  const wallet = authUser.walletAddresses.find((address) => isAddressEqual(address, request.userAddress as Address));
  if (!wallet) {
    refuse(`userAddress ${request.userAddress} is not a wallet of the signed-in user`, {
      field: 'userAddress',
      value: request.userAddress,
      reason: 'not_your_wallet',
    });
  }
  if (BigInt(request.value) !== 0n) {
    throw new AppError('INVALID_FORMAT', 'value must be "0": the relayer never sends its own ETH', {
      field: 'value',
      value: request.value,
      errors: ['value: must be "0"'],
    });
  }
  if (request.gasLimit !== undefined && request.gasLimit > deps.settings.maxGasLimit) {
    throw new AppError('INVALID_FORMAT', `gasLimit must be at most ${deps.settings.maxGasLimit}`, {
      field: 'gasLimit',
      value: String(request.gasLimit),
      errors: [`gasLimit: must be at most ${deps.settings.maxGasLimit}`],
    });
  }
  const plan = await planRelay(deps, request, wallet);
  await checkGasPrice(deps);
  const user = wallet.toLowerCase();
  if (plan.claimLimit) await refreshInFlightClaims(deps, user, plan.claimLimit.collectionId);
  const { id: requestId, quota } = await reserveRelay(deps, { user, userId: authUser.userId, plan });
  const gasLimit = request.gasLimit === undefined ? undefined : BigInt(request.gasLimit);
  const common = {
    requestId,
    gasLimit,
    brandId: plan.brandId,
    user: wallet,
    collectionId: plan.collectionId,
  };
  let permitTx: RelayTransaction | undefined;
  if (plan.permitFirst) {
    permitTx = await sendOne(deps, {
      ...common,
      ...plan.permitFirst,
      purpose: 'relay-permit',
      functionName: 'permit',
      collectionId: undefined,
      final: false,
    });
    if (permitTx.status !== 'confirmed') {
      permitTx = await deps.relayer.waitFor(permitTx.id, deps.settings.waitMs);
      if (permitTx.status === 'failed') throw transactionFailed(permitTx, 'permit');
      if (permitTx.status !== 'confirmed') {
        throw new AppError('SERVICE_UNAVAILABLE', 'The permit transaction is not mined yet; retry the claim shortly', {
          id: permitTx.id,
          transactionHash: permitTx.hash,
        });
      }
    }
  }
  const tx = await sendOne(deps, {
    ...common,
    to: plan.to,
    data: plan.data,
    purpose: 'relay',
    functionName: plan.functionName,
    final: true,
  });
  if (!tx.hash) throw new AppError('INTERNAL_ERROR', 'The relayer accepted the transaction without a hash');
  deps.logger.info(
    { id: tx.id, hash: tx.hash, user, function: plan.functionName, brandId: plan.brandId, status: tx.status },
    'relayed',
  );
  const response: RelayResponse = {
    success: true,
    id: tx.id,
    transactionHash: tx.hash,
    gasUsed: tx.gasUsed === null ? null : tx.gasUsed.toString(),
    effectiveGasPrice: tx.effectiveGasPrice === null ? null : tx.effectiveGasPrice.toString(),
    blockNumber: toNumberOrNull(tx.blockNumber),
    from: tx.from,
    to: tx.to,
    status: publicStatus(tx.status),
    explorerUrl: explorerLink(deps.settings.explorerUrl, tx.hash),
    functionName: plan.functionName,
    ...(permitTx?.hash ? { permitTransactionHash: permitTx.hash } : {}),
  };
  return { response, quota };
}

/** `GET /relayer/transactions/:id`: the caller's own relayed transaction, 404 for anyone else's. */
export async function getRelayTransaction(
  deps: Pick<RelayServiceDeps, 'relayer' | 'settings' | 'db'>,
  authUser: AuthenticatedUser,
  id: string,
): Promise<RelayTransactionView> {
  const notFound = () => new AppError('NOT_FOUND', `No relayed transaction ${id} of yours`);
  const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
  if (!uuid.test(id)) throw notFound();
  const tx = await deps.relayer.get(id);
  const owner = tx?.userAddress;
  if (!tx || !owner || !authUser.walletAddresses.some((address) => isAddressEqual(address, owner))) throw notFound();
  return {
    success: true,
    id: tx.id,
    status: publicStatus(tx.status),
    state: tx.status,
    transactionHash: tx.hash,
    hashes: tx.hashes,
    from: tx.from,
    to: tx.to,
    gasUsed: tx.gasUsed === null ? null : tx.gasUsed.toString(),
    effectiveGasPrice: tx.effectiveGasPrice === null ? null : tx.effectiveGasPrice.toString(),
    blockNumber: toNumberOrNull(tx.blockNumber),
    error: tx.error,
    explorerUrl: tx.hash ? explorerLink(deps.settings.explorerUrl, tx.hash) : null,
    createdAt: tx.createdAt.toISOString(),
    updatedAt: tx.updatedAt.toISOString(),
  };
}
