import { sql } from 'kysely';
import type { Address } from 'viem';
import type { Database } from '../db/database.ts';
import type { ChainPublicClient } from './deploy.ts';

/**
 * The next nonce a signer may use: the greater of the chain's pending nonce and one past the highest nonce
 * the signer's table recorded (a transaction recorded but never sent still holds its nonce). Shared by the
 * minter (`chain_txs`) and the relayer (`relay_transactions`), each the only signer of its key.
 */
export async function readNextNonce(options: {
  db: Database;
  publicClient: ChainPublicClient;
  table: 'chain_txs' | 'relay_transactions';
  chainId: number;
  address: Address;
}): Promise<bigint> {
  const { db, publicClient, table, chainId, address } = options;
  const [pendingCount, recorded] = await Promise.all([
    publicClient.getTransactionCount({ address, blockTag: 'pending' }),
    sql<{ max_nonce: string | bigint | null }>`
      SELECT max(nonce) AS max_nonce FROM ${sql.table(table)}
      WHERE chain_id = ${chainId} AND signer = ${address.toLowerCase()}`.execute(db),
  ]);
  const max = recorded.rows[0]?.max_nonce;
  const fromDb = max === null || max === undefined ? 0n : BigInt(max) + 1n;
  const fromChain = BigInt(pendingCount);
  return fromChain > fromDb ? fromChain : fromDb;
}
