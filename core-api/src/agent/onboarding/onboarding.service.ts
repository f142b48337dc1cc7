import { AppError, isAppError } from '@pts/shared';
import { getBrandKeyStatus, revokeBrandKeys, rotateBrandKeys } from '../../modules/brands/brand-keys.service.ts';
import { requireRegistrableBrand } from '../../modules/brands/brand-registration.ts';
import { createBrand } from '../../modules/brands/brands.service.ts';
import { readRulesOfBrands } from '../../modules/events/rule-reads.ts';
import { requireBrandAuthority } from '../actions/brand-authority.ts';
import type { AgentServiceDeps } from '../agent-services.ts';
import type { AgentPrincipal } from '../agent-tool.ts';
import { grantBrandToKey } from '../keys/agent-keys.service.ts';
import { brandServiceFor } from '../program/program.service.ts';

/**
 * Onboarding through the agent API (docs/agent-api/program.md, "Onboarding"): a brand created by the admin
 * API's own `createBrand` (with the default rules, so it takes events at once), its category, the onboarding
 * record and the grant of the brand to the onboarding key, all in one transaction.
 */

export interface OnboardBrandInput {
  /** Absent: pts generates the brand's address. */
  brandAddress?: string | undefined;
  /** The address's EIP-191 signature of `brandAddressProofMessage` (required with `brandAddress`). */
  addressSignature?: string | undefined;
  businessName: string;
  contactEmail: string;
  website: string;
  /** The website's host: the brand's authorized domain. */
  domain: string;
  category: string;
  description: string;
}

export async function onboardBrand(d: AgentServiceDeps, principal: AgentPrincipal, input: OnboardBrandInput) {
  const service = brandServiceFor(d, principal.keyId);
  await requireRegistrableBrand(
    {
      db: d.db,
      platformAddresses: platformAddressesOf(d),
      getCode: (address) => d.publicClient.getCode({ address }),
    },
    { address: input.brandAddress, addressSignature: input.addressSignature, domain: input.domain },
  );
  const now = d.clock.now();
  const { brand, category } = await recordOnboarding(d, service, principal, input, now);
  d.changes.emit({ kind: 'brand', brandId: brand.brandId });
  d.changes.emit({ kind: 'rules', brandId: brand.brandId });
  const rules = (await readRulesOfBrands(d.db, [brand.brandId])).get(brand.brandId) ?? [];
  return {
    brandId: brand.brandId,
    name: brand.name,
    domain: brand.domain,
    category,
    createdAt: brand.createdAt,
    securityKey: brand.securityKey,
    apiKey: brand.apiKey,
    grantedToKey: principal.keyId,
    events: rules.map((rule) => ({
      eventId: rule.id,
      eventType: rule.event_type,
      rewardAmount: Number(rule.reward_amount),
    })),
  };
}

/**
 * The brand, its default rules and category, the key's onboarding record and its grant, in one transaction
 * (the change listeners are told after the commit, by the caller).
 */
function recordOnboarding(
  d: AgentServiceDeps,
  service: ReturnType<typeof brandServiceFor>,
  principal: AgentPrincipal,
  input: OnboardBrandInput,
  now: Date,
) {
  return d.db.transaction().execute(async (trx) => {
    // Inside the transaction the listeners would hear before the commit: they are told after it, below.
    const brand = await createBrand(
      { ...service, db: trx, changes: undefined },
      {
        name: input.businessName,
        domain: input.domain,
        ...(input.brandAddress === undefined ? {} : { address: input.brandAddress }),
      },
      { withDefaultRules: true },
    ).catch((error: unknown) => {
      throw isAppError(error) && error.code === 'CONFLICT' && input.brandAddress
        ? brandAddressTaken(input.brandAddress)
        : error;
    });
    const row = await trx
      .updateTable('brands')
      .set({ category: input.category })
      .where('address', '=', brand.brandId)
      .returning('category')
      .executeTakeFirstOrThrow();
    await trx
      .insertInto('agent_brand_onboardings')
      .values({
        brand_id: brand.brandId,
        key_id: principal.keyId,
        business_name: input.businessName,
        contact_email: input.contactEmail,
        website: input.website,
        description: input.description,
        created_at: now,
      })
      .execute();
    await grantBrandToKey(
      { db: trx, clock: d.clock, secrets: d.secrets, actor: `agent:${principal.keyId}` },
      principal.keyId,
      brand.brandId,
    );
    return { brand, category: row.category };
  });
}

/** The platform's own contracts and accounts: never a brand's address. */
function platformAddressesOf(d: AgentServiceDeps): (string | undefined)[] {
  const contracts = d.contracts;
  return [
    contracts.rewardToken,
    contracts.perkNft,
    contracts.pointsSale,
    contracts.businessEscrow,
    ...Object.values(d.chain.contracts),
    d.chain.minterAddress,
    d.relayerAddress,
  ];
}

/** createBrand's conflict says "omit the address"; here the address is required, so say what to do instead. */
function brandAddressTaken(address: string): AppError {
  return new AppError(
    'CONFLICT',
    `${address} is already a pts brand; check_brand shows it. Onboard a brand that is not registered yet (its own address)`,
    { field: 'brandAddress', value: address },
  );
}

export type BrandKeysAction = 'rotate' | 'revoke' | 'status';

/**
 * The brand's API key and security key through the brands module's one implementation
 * (modules/brands/brand-keys.service.ts): `status` reads their state (never a secret), `rotate` issues new
 * ones (returned this once; the old security key keeps verifying for `graceMinutes`, 0 by default), `revoke`
 * replaces them with keys nobody knows. Only for a brand the key acts for (403 otherwise).
 */
export async function manageBrandKeys(
  d: AgentServiceDeps,
  principal: AgentPrincipal | undefined,
  input: { action: BrandKeysAction; brandId: string; graceMinutes?: number | undefined },
) {
  requireBrandAuthority(principal, input.brandId, 'Managing brand keys');
  const keyId = (principal as AgentPrincipal).keyId;
  const deps = {
    db: d.db,
    clock: d.clock,
    secrets: d.secrets,
    changes: d.changes,
    actor: `agent:${keyId}`,
  };
  if (input.action === 'status') return getBrandKeyStatus(deps, input.brandId);
  if (input.action === 'revoke') return revokeBrandKeys(deps, input.brandId);
  return rotateBrandKeys(deps, input.brandId, { graceMinutes: input.graceMinutes });
}

/** Onboarding and brand key management through the agent API (onboarding.tools.ts), over the handle compose.ts gives. */
export interface AgentOnboardingService {
  onboardBrand(principal: AgentPrincipal, input: OnboardBrandInput): ReturnType<typeof onboardBrand>;
  manageBrandKeys(
    principal: AgentPrincipal | undefined,
    input: Parameters<typeof manageBrandKeys>[2],
  ): ReturnType<typeof manageBrandKeys>;
}

export function createAgentOnboardingService(d: AgentServiceDeps): AgentOnboardingService {
  return {
    onboardBrand: (principal, input) => onboardBrand(d, principal, input),
    manageBrandKeys: (principal, input) => manageBrandKeys(d, principal, input),
  };
}
