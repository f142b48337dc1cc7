import type { MintFinality } from '../config.ts';
import type { ChainPublicClient } from './deploy.ts';

// A mint is final once its block is `depth` blocks below the head and at or below the chain's `safe` or
// `finalized` block when one is asked for. Until then its rewards stay `submitted`: the unsafe head of an
// OP-stack L2 (and a local chain restarted from an older state) can still lose the block.

export const IMMEDIATE_FINALITY: MintFinality = { depth: 0, tag: 'latest' };

/**
 * The highest final block as of `head` (may be negative on a young chain: nothing is final yet). A chain
 * without the asked tag (an RPC that rejects `safe`) falls back to the depth alone.
 */
export async function readFinalBlock(
  publicClient: ChainPublicClient,
  finality: MintFinality,
  head: bigint,
  onTagUnsupported?: (error: unknown) => void,
): Promise<bigint> {
  const byDepth = head - BigInt(finality.depth);
  if (finality.tag === 'latest') return byDepth;
  try {
    const block = await publicClient.getBlock({ blockTag: finality.tag });
    const tagged = block.number ?? -1n;
    return tagged < byDepth ? tagged : byDepth;
  } catch (error) {
    onTagUnsupported?.(error);
    return byDepth;
  }
}
