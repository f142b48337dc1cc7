import { type Kysely, sql } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { isMemberKey } from '../../modules/accounts/member-keys.ts';
import { eventPlatform } from '../../modules/leaderboards/reward-activity.ts';
import { readBrandMemberFigures } from '../../modules/ledger/member-activity.ts';
import { type ActivityProfile, type Archetype, classifyArchetype } from './formulas.ts';

/**
 * Aggregate SQL of the audience tools (docs/agent-api/intelligence.md, "Audience"): one grouped pass over
 * a brand's events (member figures from the ledger), whatever the number of members. Agent identities
 * (`agent:%`) are left out.
 */

const DAY_MS = 86_400_000;

/** One member of a brand as the archetype rule sees them, at that brand only. */
export interface BrandMember {
  identityKey: string;
  profile: ActivityProfile;
  archetype: Archetype;
  /** Accepted earnings at the brand before now, all time (the affordability funnel's measure). */
  earnedAllTime: bigint;
  /** First accepted event at the brand (null: only redemptions there). */
  firstEventAt: Date | null;
}

/**
 * Every member of the brand (an accepted event or a redemption not failed there before `now`) with their
 * 30-day profile at the brand (the member ledger's figures, modules/ledger readBrandMemberFigures) and its
 * archetype (formulas.ts `classifyArchetype`).
 */
export async function readBrandMembers(
  db: Kysely<DB>,
  brandId: string,
  window: { from: Date; to: Date; days: number },
): Promise<BrandMember[]> {
  const { to } = window;
  const rows = await readBrandMemberFigures(db, brandId, window);
  return rows.map((r) => {
    const last = r.last_at ? new Date(r.last_at) : null;
    const profile: ActivityProfile = {
      events: r.events ?? 0,
      distinctEventTypes: r.types ?? 0,
      activeDays: r.days ?? 0,
      daysSinceLastEvent: last ? Math.floor((to.getTime() - last.getTime()) / DAY_MS) : null,
      redemptions: r.redemptions ?? 0,
      earned: BigInt(r.earned ?? '0'),
      spent: BigInt(r.spent ?? '0'),
    };
    return {
      identityKey: r.k,
      profile,
      archetype: classifyArchetype(profile, window.days),
      earnedAllTime: BigInt(r.earned_all ?? '0'),
      firstEventAt: r.first_at ? new Date(r.first_at) : null,
    };
  });
}

/** Events and distinct members per platform over the window (`eventPlatform`: declared, identity, else web). */
export interface PlatformShare {
  platform: string;
  events: number;
  members: number;
}

/**
 * Where the brand's accepted events of the window happened, by the leaderboards' platform rule
 * (`metadata.platform` when declared, else the platform of a synthetic identity, else `web`). One grouped
 * scan by (declared platform, member).
 */
export async function readPlatformSplit(
  db: Kysely<DB>,
  brandId: string,
  from: Date,
  to: Date,
): Promise<PlatformShare[]> {
  const result = await sql<{ declared: string | null; k: string; n: number }>`
    SELECT metadata ->> 'platform' AS declared, user_email AS k, count(*)::int AS n FROM events
     WHERE brand_id = ${brandId} AND status = 'accepted' AND created_at >= ${from} AND created_at < ${to}
       AND ${isMemberKey(sql.ref('user_email'))}
     GROUP BY 1, 2`.execute(db);
  const byPlatform = new Map<string, { events: number; members: Set<string> }>();
  for (const row of result.rows) {
    const platform = eventPlatform(row.k, row.declared === null ? null : { platform: row.declared });
    const entry = byPlatform.get(platform) ?? { events: 0, members: new Set<string>() };
    entry.events += row.n;
    entry.members.add(row.k);
    byPlatform.set(platform, entry);
  }
  return [...byPlatform.entries()]
    .map(([platform, e]) => ({ platform, events: e.events, members: e.members.size }))
    .sort((a, b) => b.events - a.events || a.platform.localeCompare(b.platform));
}
