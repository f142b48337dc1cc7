import { sql } from 'kysely';
import type { Database } from '../../db/database.ts';
import { readRewardMintStates } from '../../modules/ledger/reward-mints.ts';

// The tables behind agent rewards (docs/agent-api/rewards.md): claims, and the evidence that earns them —
// accepted events a key brought through the agent API (process_event marks them `metadata.agentKeyId`) and
// the brands a key onboarded (agent_brand_onboardings).

export type AgentRewardType = 'discovery' | 'onboarding';

export interface AgentRewardClaimRow {
  keyId: string;
  brandId: string;
  rewardType: AgentRewardType;
  amount: bigint;
  eventId: string;
  claimedAt: Date;
}

/** A claim with what became of its reward: `paid` once its event is recorded, and the mint's state. */
export interface AgentRewardClaimView extends AgentRewardClaimRow {
  brandName: string;
  paid: boolean;
  mintStatus: 'pending' | 'submitted' | 'confirmed' | 'failed' | null;
  transactionHash: string | null;
}

/** Brands whose Brand ID is `brandId`, or whose website or verified domain is exactly `domain`. */
export async function findBrandsByReference(
  db: Database,
  ref: { brandId?: string | undefined; domain?: string | undefined },
): Promise<{ brandId: string; name: string; domain: string; verifiedDomains: string[] }[]> {
  const rows = await db
    .selectFrom('brands')
    .select(['address', 'name', 'website_domain', 'verified_domains'])
    .where((eb) =>
      ref.brandId
        ? eb('address', '=', ref.brandId)
        : eb.or([
            eb('website_domain', '=', ref.domain ?? ''),
            sql<boolean>`exists (select 1 from jsonb_array_elements_text(brands.verified_domains) as d(domain) where d.domain = ${ref.domain ?? ''})`,
          ]),
    )
    .orderBy('address')
    .limit(5)
    .execute();
  return rows.map((row) => ({
    brandId: row.address,
    name: row.name,
    domain: row.website_domain,
    verifiedDomains: row.verified_domains,
  }));
}

/** Row-locks the key: claims of one key are decided one at a time (the period cap counts them). */
export async function lockAgentKey(trx: Database, keyId: string): Promise<boolean> {
  const row = await trx
    .selectFrom('agent_keys')
    .select('key_id')
    .where('key_id', '=', keyId)
    .forUpdate()
    .executeTakeFirst();
  return row !== undefined;
}

const claimColumns = [
  'agent_reward_claims.key_id',
  'agent_reward_claims.brand_id',
  'agent_reward_claims.reward_type',
  'agent_reward_claims.amount',
  'agent_reward_claims.event_id',
  'agent_reward_claims.claimed_at',
] as const;

function claimViewsQuery(db: Database) {
  return db
    .selectFrom('agent_reward_claims')
    .innerJoin('brands', 'brands.address', 'agent_reward_claims.brand_id')
    .leftJoin('events', 'events.id', 'agent_reward_claims.event_id')
    .select([...claimColumns, 'brands.name as brand_name', 'events.id as paid_event']);
}

type ClaimViewRow = Awaited<ReturnType<ReturnType<typeof claimViewsQuery>['execute']>>[number];

/** The claims with what became of their rewards: the mint states are the ledger's (readRewardMintStates). */
async function toClaimViews(db: Database, rows: ClaimViewRow[]): Promise<AgentRewardClaimView[]> {
  const mints = await readRewardMintStates(
    db,
    rows.map((row) => row.event_id),
  );
  return rows.map((row) => {
    const mint = mints.get(row.event_id);
    return {
      keyId: row.key_id,
      brandId: row.brand_id,
      rewardType: row.reward_type,
      amount: BigInt(row.amount),
      eventId: row.event_id,
      claimedAt: row.claimed_at,
      brandName: row.brand_name,
      paid: row.paid_event !== null,
      mintStatus: mint?.status ?? null,
      transactionHash: mint?.transactionHash ?? null,
    };
  });
}

/** The key's claim of this brand and type, if any, with its payment state. */
export async function findAgentRewardClaim(
  db: Database,
  key: { keyId: string; brandId: string; rewardType: AgentRewardType },
): Promise<AgentRewardClaimView | undefined> {
  const row = await claimViewsQuery(db)
    .where('agent_reward_claims.key_id', '=', key.keyId)
    .where('agent_reward_claims.brand_id', '=', key.brandId)
    .where('agent_reward_claims.reward_type', '=', key.rewardType)
    .executeTakeFirst();
  return row ? (await toClaimViews(db, [row]))[0] : undefined;
}

/** Every claim of the key, newest first. */
export async function listAgentRewardClaims(db: Database, keyId: string): Promise<AgentRewardClaimView[]> {
  const rows = await claimViewsQuery(db)
    .where('agent_reward_claims.key_id', '=', keyId)
    .orderBy('agent_reward_claims.claimed_at', 'desc')
    .orderBy('agent_reward_claims.brand_id')
    .execute();
  return toClaimViews(db, rows);
}

/** Claims the key made from `since` on (paid or still being paid): what the period cap counts. */
export async function countAgentRewardClaimsSince(db: Database, keyId: string, since: Date): Promise<number> {
  const row = await db
    .selectFrom('agent_reward_claims')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('key_id', '=', keyId)
    .where('claimed_at', '>=', since)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function insertAgentRewardClaim(db: Database, claim: AgentRewardClaimRow): Promise<void> {
  await db
    .insertInto('agent_reward_claims')
    .values({
      key_id: claim.keyId,
      brand_id: claim.brandId,
      reward_type: claim.rewardType,
      amount: claim.amount,
      event_id: claim.eventId,
      claimed_at: claim.claimedAt,
    })
    .execute();
}

/**
 * Gives back a claim whose reward was refused or failed before its event was recorded. A claim whose event
 * did commit (the answer was lost, not the write) stays: deleting it would let the reward be claimed twice.
 */
export async function releaseUnpaidClaim(db: Database, eventId: string): Promise<void> {
  await db
    .deleteFrom('agent_reward_claims')
    .where('event_id', '=', eventId)
    .where(({ not, exists, selectFrom }) =>
      not(exists(selectFrom('events').select('events.id').where('events.id', '=', eventId))),
    )
    .execute();
}

/** Whether the key brought at least one accepted event to the brand through the agent API. */
export async function keyBroughtEvent(db: Database, keyId: string, brandId: string): Promise<boolean> {
  const row = await db
    .selectFrom('events')
    .select('id')
    .where('brand_id', '=', brandId)
    .where('status', '=', 'accepted')
    .where(sql<string>`metadata->>'agentKeyId'`, '=', keyId)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

/** When the key onboarded the brand, if it did. */
export async function findKeyOnboarding(db: Database, keyId: string, brandId: string): Promise<Date | undefined> {
  const row = await db
    .selectFrom('agent_brand_onboardings')
    .select('created_at')
    .where('brand_id', '=', brandId)
    .where('key_id', '=', keyId)
    .executeTakeFirst();
  return row?.created_at;
}

/** What the onboarding reward's evidence reads of a brand: its domains and who last rotated its keys. */
export async function readBrandTakeover(db: Database, brandId: string) {
  return db
    .selectFrom('brands')
    .select([
      'website_domain',
      'verified_domains',
      'keys_rotated_at',
      'keys_rotated_by',
      'keys_revoked_at',
      'previous_security_key_expires_at',
    ])
    .where('address', '=', brandId)
    .executeTakeFirst();
}

/**
 * The brand's accepted, brand-signed events since `since` that `keyId` did not bring: how many distinct members
 * sent them and when the first came.
 */
export async function readSignedMemberActivity(
  db: Database,
  brandId: string,
  since: Date,
  keyId: string,
): Promise<{ members: number; firstAt: Date | null }> {
  const row = await db
    .selectFrom('events')
    .select((eb) => [
      eb.fn.count<string>('user_email').distinct().as('members'),
      eb.fn.min<Date | null>('created_at').as('first_at'),
    ])
    .where('brand_id', '=', brandId)
    .where('status', '=', 'accepted')
    .where('sent_by', '=', 'brand')
    .where('created_at', '>=', since)
    .where(sql<boolean>`coalesce(metadata->>'agentKeyId', '') <> ${keyId}`)
    .executeTakeFirstOrThrow();
  return { members: Number(row.members), firstAt: row.first_at ? new Date(row.first_at) : null };
}

/** The key's agent API activity: accepted events it brought (all brands) and brands it onboarded. */
export async function readAgentActivity(
  db: Database,
  keyId: string,
): Promise<{ acceptedEvents: number; brandsWithEvents: string[]; onboardedBrands: string[] }> {
  const [events, onboarded] = await Promise.all([
    db
      .selectFrom('events')
      .select(['brand_id', (eb) => eb.fn.countAll<string>().as('n')])
      .where('status', '=', 'accepted')
      .where(sql<string>`metadata->>'agentKeyId'`, '=', keyId)
      .groupBy('brand_id')
      .orderBy('brand_id')
      .execute(),
    db
      .selectFrom('agent_brand_onboardings')
      .select('brand_id')
      .where('key_id', '=', keyId)
      .orderBy('brand_id')
      .execute(),
  ]);
  return {
    acceptedEvents: events.reduce((sum, row) => sum + Number(row.n), 0),
    brandsWithEvents: events.map((row) => row.brand_id),
    onboardedBrands: onboarded.map((row) => row.brand_id),
  };
}
