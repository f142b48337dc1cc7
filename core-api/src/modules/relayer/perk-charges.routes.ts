import {
  AppError,
  checkPerkStatusQuerySchema,
  type ListPerkHoldersResponse,
  listPerkHoldersQuerySchema,
  listPerkHoldersResponseSchema,
  type PerkHolder,
  type PerkStatusResponse,
  perkStatusResponseSchema,
  type RedeemPerkResponse,
  redeemPerkRequestSchema,
  redeemPerkResponseSchema,
} from '@pts/shared';
import type { Request } from 'express';
import type { Logger } from 'pino';
import { type Address, BaseError, ContractFunctionRevertedError, encodeFunctionData, getAddress } from 'viem';
import { perkNFTAbi } from '../../chain/artifacts/index.ts';
import type { ChainPublicClient } from '../../chain/deploy.ts';
import type { RelayerSender } from '../../chain/relayer.types.ts';
import type { BrandSignatureVerifier } from '../../http/brand-signature.ts';
import type { RateLimit } from '../../http/rate-limit.ts';
import { defineRoute, failure, type Route } from '../../http/route-table.ts';
import { limitIp } from './ip-limit.ts';
import type { RelayRecords } from './relay.service.ts';

/** Redeem bodies are four small fields. */
const PERK_CHARGES_BODY_LIMIT_BYTES = 4 * 1024;
/** Block span of one `eth_getLogs` request while listing holders (public RPCs cap the range). */
const LOG_CHUNK_BLOCKS = 50_000n;

export interface PerkChargesDeps {
  /** Where the platform deployed PerkNFT (its logs start there). */
  relayRecords: Pick<RelayRecords, 'deploymentTx'>;
  logger: Logger;
  relayer: RelayerSender;
  publicClient: ChainPublicClient;
  /** Undefined when this process knows no PerkNFT address (PTS_CHAIN=rpc without PTS_PERK_NFT_ADDRESS). */
  perkNftAddress: Address | undefined;
  verifyBrandSignature: BrandSignatureVerifier;
  /** How long a redemption waits for its receipt before answering `pending` (PTS_RELAYER_WAIT_MS). */
  waitMs: number;
  /** Requests per IP (spec 8: 100 per minute on the relayer host, PTS_RELAYER_IP_PER_MINUTE). */
  ipLimit: RateLimit;
}

interface CollectionView {
  brand: string;
  chargesPerToken: bigint;
  active: boolean;
}

/** Runs `work` after every earlier call with the same key has finished (one redemption per token at a time). */
function createKeyedQueue() {
  const tails = new Map<string, Promise<unknown>>();
  return async function run<T>(key: string, work: () => Promise<T>): Promise<T> {
    const previous = tails.get(key) ?? Promise.resolve();
    const next = previous.then(work, work);
    const tail = next.catch(() => undefined);
    tails.set(key, tail);
    try {
      return await next;
    } finally {
      if (tails.get(key) === tail) tails.delete(key);
    }
  };
}

function toSafeNumber(value: bigint): number {
  return value > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(value);
}

function revertName(error: unknown): string | undefined {
  if (!(error instanceof BaseError)) return undefined;
  const reverted = error.walk((inner) => inner instanceof ContractFunctionRevertedError);
  return reverted instanceof ContractFunctionRevertedError ? reverted.data?.errorName : undefined;
}

/**
 * Brand-signed perk charge endpoints of the relayer host (spec 4.10; docs/relayer.md "Perk charge endpoints"):
 * `POST /redeem-perk` spends a holder's charges through PerkNFT.useCharge (the relayer holds OPERATOR_ROLE),
 * `GET /check-perk-status` and `GET /list-perk-holders` read the chain. Only the collection's own brand may
 * use them; the request must carry that brand's HMAC signature (GET signs the empty body).
 */
export function perkChargeRoutes(deps: PerkChargesDeps): Route[] {
  const { publicClient } = deps;
  const serialize = createKeyedQueue();
  let deploymentBlock: Promise<bigint> | undefined;

  function nft(): Address {
    if (!deps.perkNftAddress) {
      throw new AppError(
        'SERVICE_UNAVAILABLE',
        'The PerkNFT contract address is unknown on this instance: set PTS_PERK_NFT_ADDRESS',
      );
    }
    return deps.perkNftAddress;
  }

  /** Requires a valid signature of `brandId` (unsigned requests are refused, not treated as anonymous). */
  async function requireBrandSignature(req: Request, brandId: string): Promise<void> {
    const claim = await deps.verifyBrandSignature(req, brandId);
    if (!claim) {
      throw new AppError(
        'UNAUTHORIZED',
        'Sign this request with the brand security key: headers X-PTS-Timestamp and X-PTS-Signature ' +
          '(HMAC-SHA256 of `timestamp.METHOD.path-with-query.raw-body`; GET signs an empty body)',
        { reason: 'signature_required' },
      );
    }
  }

  /** The collection, checked to belong to `brandId`. */
  async function ownedCollection(collectionId: number, brandId: string): Promise<CollectionView> {
    let collection: { brand: Address; chargesPerToken: bigint; active: boolean };
    try {
      collection = await publicClient.readContract({
        address: nft(),
        abi: perkNFTAbi,
        functionName: 'collection',
        args: [BigInt(collectionId)],
      });
    } catch (error) {
      if (revertName(error) === 'UnknownCollection') {
        throw new AppError('PERK_NOT_FOUND', `Perk collection ${collectionId} does not exist`, {
          field: 'collection_id',
          value: String(collectionId),
        });
      }
      throw error;
    }
    if (collection.brand.toLowerCase() !== brandId) {
      throw new AppError('FORBIDDEN', `Perk collection ${collectionId} belongs to another brand`, {
        collectionId,
        brandId,
      });
    }
    return {
      brand: collection.brand.toLowerCase(),
      chargesPerToken: collection.chargesPerToken,
      active: collection.active,
    };
  }

  function remainingCharges(user: string, collectionId: number): Promise<bigint> {
    return publicClient.readContract({
      address: nft(),
      abi: perkNFTAbi,
      functionName: 'remainingCharges',
      args: [user as Address, BigInt(collectionId)],
    });
  }

  function claimedBy(user: string, collectionId: number): Promise<bigint> {
    return publicClient.readContract({
      address: nft(),
      abi: perkNFTAbi,
      functionName: 'claimedBy',
      args: [user as Address, BigInt(collectionId)],
    });
  }

  function insufficient(collectionId: number, user: string, remaining: bigint, requested: number): AppError {
    return new AppError(
      'INSUFFICIENT_CHARGES',
      `The holder has ${remaining} charge(s) left in collection ${collectionId}; ${requested} requested`,
      { collectionId, userAddress: user, remaining: toSafeNumber(remaining), requested },
    );
  }

  /** Where PerkNFT was deployed (its logs start there); block 0 when the platform did not deploy it. */
  function fromBlock(): Promise<bigint> {
    deploymentBlock ??= (async () => {
      const txHash = await deps.relayRecords.deploymentTx(nft()).catch(() => undefined);
      if (!txHash) return 0n;
      const receipt = await publicClient.getTransactionReceipt({ hash: txHash });
      return receipt.blockNumber;
    })().catch(() => 0n);
    return deploymentBlock;
  }

  /** Every wallet that ever claimed the collection, from PerkNFT `PerkClaimed` logs (perks never move). */
  async function holdersOf(collectionId: number): Promise<string[]> {
    const start = await fromBlock();
    const latest = await publicClient.getBlockNumber({ cacheTime: 0 });
    const holders = new Set<string>();
    for (let from = start; from <= latest; from += LOG_CHUNK_BLOCKS) {
      const to = from + LOG_CHUNK_BLOCKS - 1n < latest ? from + LOG_CHUNK_BLOCKS - 1n : latest;
      const logs = await publicClient.getContractEvents({
        address: nft(),
        abi: perkNFTAbi,
        eventName: 'PerkClaimed',
        args: { collectionId: BigInt(collectionId) },
        fromBlock: from,
        toBlock: to,
      });
      for (const log of logs) if (log.args.user) holders.add(log.args.user.toLowerCase());
    }
    return [...holders].sort();
  }

  const limited = [limitIp(deps.ipLimit)];
  const common = {
    401: failure('Unsigned, badly signed, stale or replayed request'),
    403: failure('The collection belongs to another brand'),
    404: failure('Unknown perk collection (PERK_NOT_FOUND)'),
    429: failure('More than PTS_RELAYER_IP_PER_MINUTE requests per minute from this IP'),
    503: failure('PerkNFT address unknown on this instance, or the relayer unavailable'),
  };
  return [
    defineRoute({
      method: 'post',
      path: '/redeem-perk',
      summary: "Spend charges of a holder's perk (brand-signed)",
      description:
        'Sends PerkNFT.useCharge(holder, collection, amount) from the relayer (gas charged to the brand). Only the ' +
        "collection's brand may redeem. Concurrent redemptions of one holder's perk are serialized, so they never " +
        'spend more charges than exist; the loser gets 409 INSUFFICIENT_CHARGES with `details.remaining`.',
      tags: ['relayer'],
      security: ['brandSignature'],
      before: limited,
      request: { body: redeemPerkRequestSchema, bodyLimitBytes: PERK_CHARGES_BODY_LIMIT_BYTES },
      responses: {
        200: { description: 'Redeemed (or pending when the receipt is slow)', schema: redeemPerkResponseSchema },
        400: failure('Invalid body'),
        ...common,
        409: failure('Not enough charges left (INSUFFICIENT_CHARGES, `details.remaining`)'),
        413: failure('Body over 4 KB'),
        415: failure('Not application/json'),
        500: failure('The transaction failed on chain (TRANSACTION_FAILED)'),
      },
      handle: async ({ body: input, req }) => {
        await requireBrandSignature(req, input.brand_id);
        const user = input.user_address;
        const collectionId = input.collection_id;
        // One redemption of a given holder's perk at a time in this process: each one reads the charges the
        // previous one left, so concurrent calls never send more useCharge transactions than there are charges.
        // (Across processes the contract itself refuses: a losing transaction reverts with InsufficientCharges
        // → 409.)
        return serialize(`${collectionId}:${user}`, async (): Promise<RedeemPerkResponse> => {
          await ownedCollection(collectionId, input.brand_id);
          const before = await remainingCharges(user, collectionId);
          if (before < BigInt(input.amount)) throw insufficient(collectionId, user, before, input.amount);
          const submitted = await deps.relayer.submit({
            to: nft(),
            data: encodeFunctionData({
              abi: perkNFTAbi,
              functionName: 'useCharge',
              args: [getAddress(user), BigInt(collectionId), BigInt(input.amount)],
            }),
            brandId: input.brand_id,
            userAddress: getAddress(user),
            purpose: 'perk-redeem',
            collectionId: BigInt(collectionId),
          });
          const tx = submitted.status === 'failed' ? submitted : await deps.relayer.waitFor(submitted.id, deps.waitMs);
          if (tx.status === 'failed') {
            if (tx.error?.startsWith('InsufficientCharges')) {
              throw insufficient(collectionId, user, await remainingCharges(user, collectionId), input.amount);
            }
            throw new AppError(
              'TRANSACTION_FAILED',
              `The redemption failed on chain: ${tx.error ?? 'unknown reason'}`,
              {
                transactionId: tx.id,
                transactionHash: tx.hash,
                reason: tx.error,
              },
            );
          }
          if (!tx.hash) {
            throw new AppError('SERVICE_UNAVAILABLE', 'The redemption was recorded but not signed yet; retry', {
              transactionId: tx.id,
            });
          }
          const confirmed = tx.status === 'confirmed';
          const remaining = confirmed ? await remainingCharges(user, collectionId) : before - BigInt(input.amount);
          deps.logger.info(
            { collectionId, user, amount: input.amount, hash: tx.hash, status: tx.status },
            'perk charge redeemed',
          );
          return {
            success: true,
            transactionId: tx.id,
            transactionHash: tx.hash,
            status: confirmed ? 'confirmed' : 'pending',
            collectionId,
            userAddress: getAddress(user),
            amount: input.amount,
            remainingCharges: toSafeNumber(remaining),
            blockNumber: tx.blockNumber === null ? null : Number(tx.blockNumber),
            gasUsed: tx.gasUsed === null ? null : tx.gasUsed.toString(),
          };
        });
      },
    }),
    defineRoute({
      method: 'get',
      path: '/check-perk-status',
      summary: "A holder's claimed perks and remaining charges in a collection (brand-signed)",
      tags: ['relayer'],
      security: ['brandSignature'],
      before: limited,
      request: { query: checkPerkStatusQuerySchema },
      responses: {
        200: { description: 'Status read from the chain', schema: perkStatusResponseSchema },
        400: failure('Invalid query'),
        ...common,
      },
      handle: async ({ query, req }) => {
        await requireBrandSignature(req, query.brand_id);
        const collection = await ownedCollection(query.collection_id, query.brand_id);
        const [claimed, remaining] = await Promise.all([
          claimedBy(query.user_address, query.collection_id),
          remainingCharges(query.user_address, query.collection_id),
        ]);
        const body: PerkStatusResponse = {
          success: true,
          collectionId: query.collection_id,
          userAddress: getAddress(query.user_address),
          claimed: toSafeNumber(claimed),
          remainingCharges: toSafeNumber(remaining),
          chargesPerToken: toSafeNumber(collection.chargesPerToken),
          active: collection.active,
        };
        return body;
      },
    }),
    defineRoute({
      method: 'get',
      path: '/list-perk-holders',
      summary: 'Holders of a collection with their claims and remaining charges (brand-signed)',
      description:
        'Holders come from PerkNFT `PerkClaimed` logs (perks never move), ordered by address; counts are live ' +
        'chain reads. Page with `limit` (1–100, default 50) and `cursor` = the previous `nextCursor`.',
      tags: ['relayer'],
      security: ['brandSignature'],
      before: limited,
      request: { query: listPerkHoldersQuerySchema },
      responses: {
        200: { description: 'One page of holders', schema: listPerkHoldersResponseSchema },
        400: failure('Invalid query'),
        ...common,
      },
      handle: async ({ query, req }) => {
        await requireBrandSignature(req, query.brand_id);
        const collection = await ownedCollection(query.collection_id, query.brand_id);
        const all = await holdersOf(query.collection_id);
        const after = query.cursor?.toLowerCase();
        const rest = after ? all.filter((address) => address > after) : all;
        const page = rest.slice(0, query.limit);
        const holders: PerkHolder[] = await Promise.all(
          page.map(async (address) => {
            const [claimed, remaining] = await Promise.all([
              claimedBy(address, query.collection_id),
              remainingCharges(address, query.collection_id),
            ]);
            return {
              userAddress: getAddress(address),
              claimed: toSafeNumber(claimed),
              remainingCharges: toSafeNumber(remaining),
            };
          }),
        );
        const body: ListPerkHoldersResponse = {
          success: true,
          collectionId: query.collection_id,
          chargesPerToken: toSafeNumber(collection.chargesPerToken),
          holders,
          nextCursor: rest.length > page.length && page.length > 0 ? getAddress(page[page.length - 1]!) : null,
        };
        return body;
      },
    }),
  ];
}
