import type { Database } from '../db/database.ts';

/** `reward_mints` rows by status: `/metrics`' fallback when the minter's queue does not answer. */
export type RewardStatusSampler = () => Promise<Record<string, number>>;

/** Counts reward_mints rows by status (`SELECT status, count(*) … GROUP BY status`). */
export function createRewardStatusSampler(db: Database): RewardStatusSampler {
  return async () => {
    const rows = await db
      .selectFrom('reward_mints')
      .select(['status', db.fn.countAll().as('count')])
      .groupBy('status')
      .execute();
    return Object.fromEntries(rows.map((row) => [row.status, Number(row.count)]));
  };
}
