import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { z } from 'zod';

/** How many processed post ids are remembered (older ones are below the high-water marks anyway). */
export const PROCESSED_IDS_KEPT = 5000;

const stateSchema = z.object({
  version: z.literal(1),
  /** High-water marks (post ids as decimal strings): only newer posts are fetched. */
  mentionsSinceId: z.string().nullable(),
  searchSinceId: z.string().nullable(),
  /** Posts fully handled (rewarded or finally refused), newest last. */
  processed: z.array(z.string()),
  /** Conversations the brand started (post_thread_reply), newest last. */
  brandConversations: z.array(z.string()),
  /** The brand handle's user id, cached 24 hours. */
  brandUser: z.object({ handle: z.string(), id: z.string(), at: z.string() }).nullable(),
  /** X said to wait (429) until this time. */
  rateLimitedUntil: z.string().nullable(),
});
export type XBotState = z.infer<typeof stateSchema>;

export function emptyState(): XBotState {
  return {
    version: 1,
    mentionsSinceId: null,
    searchSinceId: null,
    processed: [],
    brandConversations: [],
    brandUser: null,
    rateLimitedUntil: null,
  };
}

/**
 * The bot's state in one JSON file under the data dir. Every save writes a temporary file and renames it
 * over the old one, so a crash leaves either the old state or the new one, never half a file.
 */
export function createStateFile(dataDir: string, brandId: string) {
  const path = join(dataDir, `x-bot-${brandId}.json`);
  return {
    path,
    load(): XBotState {
      let text: string;
      try {
        text = readFileSync(path, 'utf8');
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return emptyState();
        throw error;
      }
      const parsed = stateSchema.safeParse(JSON.parse(text));
      if (!parsed.success) throw new Error(`${path} is not X bot state; move it away to start afresh`);
      return parsed.data;
    },
    save(state: XBotState): void {
      mkdirSync(dirname(path), { recursive: true });
      const trimmed: XBotState = {
        ...state,
        processed: state.processed.slice(-PROCESSED_IDS_KEPT),
        brandConversations: state.brandConversations.slice(-PROCESSED_IDS_KEPT),
      };
      const temporary = `${path}.${process.pid}.tmp`;
      writeFileSync(temporary, `${JSON.stringify(trimmed, null, 2)}\n`, { mode: 0o600 });
      renameSync(temporary, path);
    },
  };
}
export type StateFile = ReturnType<typeof createStateFile>;
