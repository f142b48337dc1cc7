import { hostMatchesDomain } from '../../http/cors.ts';

/**
 * The onboarding reward's evidence (docs/agent-api/rewards.md, "Onboarding evidence"): proof that a real
 * business took over the brand an agent key onboarded, made of things the key cannot produce alone however fast
 * it goes. The key is handed the brand's security key, so nothing signed with a key it holds counts.
 */
export const ONBOARDING_EVIDENCE = {
  /** Distinct members whose brand-signed events count. */
  distinctMembers: 5,
  /** How long after the first counted event the reward is held. */
  periodDays: 7,
} as const;

export type OnboardingEvidenceReason =
  | 'domain_not_verified'
  | 'keys_not_taken_over'
  | 'not_enough_members'
  | 'evidence_period';

export interface OnboardingEvidenceFacts {
  keyId: string;
  onboardedAt: Date;
  now: Date;
  brand: {
    website_domain: string;
    verified_domains: string[];
    keys_rotated_at: Date | null;
    keys_rotated_by: string | null;
    keys_revoked_at: Date | null;
    previous_security_key_expires_at: Date | null;
  };
}

export type OnboardingEvidenceVerdict =
  | { met: true }
  | { met: false; reason: OnboardingEvidenceReason; message: string; eligibleAt?: string; members?: number };

const DAY_MS = 86_400_000;

/**
 * When members' signed events start to count: once the owner rotated the keys away from the onboarding key (and
 * the key it replaced stopped verifying), or undefined while the onboarding key may still hold a valid key.
 */
export function evidenceStartsAt(facts: OnboardingEvidenceFacts): Date | undefined {
  const { brand } = facts;
  const rotatedByOther =
    brand.keys_rotated_at !== null &&
    // Onboarding sets no rotation time: any rotation at or after it came later.
    brand.keys_rotated_at.getTime() >= facts.onboardedAt.getTime() &&
    brand.keys_rotated_by !== null &&
    brand.keys_rotated_by !== `agent:${facts.keyId}` &&
    brand.keys_revoked_at === null;
  if (!rotatedByOther) return undefined;
  const graceEnd = brand.previous_security_key_expires_at?.getTime() ?? 0;
  return new Date(Math.max((brand.keys_rotated_at as Date).getTime(), graceEnd));
}

/** Whether the brand's website domain is proven through its `_pts.<domain>` TXT record. */
export function websiteDomainVerified(brand: OnboardingEvidenceFacts['brand']): boolean {
  return brand.verified_domains.some((domain) => hostMatchesDomain(brand.website_domain, domain));
}

/** The verdict from the facts and the members' activity since `evidenceStartsAt`. */
export function judgeOnboardingEvidence(
  facts: OnboardingEvidenceFacts,
  activity: { members: number; firstAt: Date | null } | undefined,
): OnboardingEvidenceVerdict {
  const domain = facts.brand.website_domain;
  if (!websiteDomainVerified(facts.brand)) {
    return {
      met: false,
      reason: 'domain_not_verified',
      message: `the brand's owner must first prove its domain ${domain}: a _pts.${domain} TXT record with its Brand ID and API key, then POST /pts-api/verify-dns`,
    };
  }
  if (!activity) {
    return {
      met: false,
      reason: 'keys_not_taken_over',
      message:
        'the brand owner must rotate its security key (pts brand rotate-key, the brand portal, or a key of its own): ' +
        'a key handed to this agent key proves nothing about the brand',
    };
  }
  if (activity.members < ONBOARDING_EVIDENCE.distinctMembers || !activity.firstAt) {
    return {
      met: false,
      reason: 'not_enough_members',
      members: activity.members,
      message: `${activity.members} of the ${ONBOARDING_EVIDENCE.distinctMembers} distinct members needed have sent brand-signed events (its site's server, plugin or bots) since the owner took its keys over`,
    };
  }
  const eligibleAt = new Date(activity.firstAt.getTime() + ONBOARDING_EVIDENCE.periodDays * DAY_MS);
  if (facts.now.getTime() < eligibleAt.getTime()) {
    return {
      met: false,
      reason: 'evidence_period',
      members: activity.members,
      eligibleAt: eligibleAt.toISOString(),
      message: `the reward is held until ${eligibleAt.toISOString()}, ${ONBOARDING_EVIDENCE.periodDays} days after the brand's first counted member event`,
    };
  }
  return { met: true };
}
