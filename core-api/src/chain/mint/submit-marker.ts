import type { Clock } from '@pts/shared';
import type { Hex } from 'viem';
import type { Database } from '../../db/database.ts';
import { markTxsSubmitted } from '../chain-txs.repository.ts';

// The submit marker: a sent transaction goes `signed` → `submitted` in grouped UPDATEs, off the send path.

/** How long sent transactions gather before one UPDATE marks them all `submitted`. */
const MARK_GATHER_MS = 50;

export interface SubmitMarker {
  /** `signed` → `submitted` once sent; resolves when written. */
  mark(chainTxId: bigint, hash: Hex, lastError: string | null): Promise<void>;
  /** Resolves when no mark is waiting. */
  drained(): Promise<void>;
}

interface Mark {
  chainTxId: bigint;
  hash: Hex;
  lastError: string | null;
  done(): void;
  fail(error: unknown): void;
}

/**
 * Marks made within MARK_GATHER_MS of each other (or while one UPDATE runs) share one statement, so under
 * load this costs one statement per several transactions, and no send waits for it. `immediate()` true (a
 * stopping minter) writes at once.
 */
export function createSubmitMarker(db: Database, clock: Clock, immediate: () => boolean): SubmitMarker {
  let marks: Mark[] = [];
  let marking: Promise<void> | undefined;

  async function drainMarks(): Promise<void> {
    while (marks.length > 0) {
      const group = marks;
      marks = [];
      try {
        await markTxsSubmitted(db, group, clock.now());
        for (const m of group) m.done();
      } catch (error) {
        for (const m of group) m.fail(error);
      }
    }
  }

  return {
    mark(chainTxId, hash, lastError) {
      return new Promise<void>((done, fail) => {
        marks.push({ chainTxId, hash, lastError, done, fail });
        marking ??= new Promise((resolve) => setTimeout(resolve, immediate() ? 0 : MARK_GATHER_MS))
          .then(drainMarks)
          .finally(() => {
            marking = undefined;
          });
      });
    },
    async drained() {
      await marking?.catch(() => undefined);
    },
  };
}
