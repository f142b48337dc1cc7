import { AppError } from '@pts/shared';
import type { Kysely } from 'kysely';
import { sql } from 'kysely';
import { type Address, type Hex, verifyMessage, zeroAddress } from 'viem';
import type { DB } from '../../db/schema.ts';
import { hostMatchesDomain } from '../../http/cors.ts';

/**
 * Who may register a brand without an operator (agent onboarding; the coming portal): an address the registrant
 * controls, never one of the platform's, and a domain no brand holds yet. docs/agent-api/program.md, "Onboarding".
 */

/** The EIP-191 message a registrant signs with the brand address's key to prove it controls it. */
export function brandAddressProofMessage(address: string, domain: string): string {
  return `I control ${address.toLowerCase()} and register it as the pts brand of ${domain.toLowerCase()}`;
}

export interface BrandRegistrationDeps {
  db: Kysely<DB>;
  /** The platform's own contracts and accounts (token, PointsSale, PerkNFT, escrow, minter, relayer). */
  platformAddresses: readonly (string | undefined)[];
  /** The code at an address on the chain ('0x' or undefined when none). */
  getCode(address: Address): Promise<Hex | undefined>;
}

export interface BrandRegistrationInput {
  /** Absent: pts generates the address. */
  address?: string | undefined;
  /** EIP-191 signature of `brandAddressProofMessage(address, domain)` by the address. */
  addressSignature?: string | undefined;
  domain: string;
}

/** Throws 400/409 unless the registrant may register this address and domain. */
export async function requireRegistrableBrand(deps: BrandRegistrationDeps, input: BrandRegistrationInput) {
  if (input.address !== undefined) await requireControlledAddress(deps, input.address, input);
  await requireUnheldDomain(deps.db, input.domain);
}

async function requireControlledAddress(
  deps: BrandRegistrationDeps,
  rawAddress: string,
  input: BrandRegistrationInput,
) {
  const address = rawAddress.toLowerCase() as Address;
  const refuse = (reason: string, message: string): never => {
    throw new AppError('VALIDATION_ERROR', message, { field: 'brandAddress', value: address, reason });
  };
  if (address === zeroAddress) {
    refuse('platform_address', 'The zero address is reserved for the platform ledger; it cannot be a brand');
  }
  if (deps.platformAddresses.some((platform) => platform?.toLowerCase() === address)) {
    refuse('platform_address', `${address} is one of the platform's own contracts or accounts, not a brand's address`);
  }
  let code: Hex | undefined;
  try {
    code = await deps.getCode(address);
  } catch {
    throw new AppError(
      'SERVICE_UNAVAILABLE',
      'Could not read the chain to check the brand address; try again shortly',
      {
        reason: 'chain_unreachable',
      },
    );
  }
  if (code && code !== '0x') {
    refuse('contract_address', `${address} is a contract; a brand address is an account whose key the brand holds`);
  }
  const message = brandAddressProofMessage(address, input.domain);
  if (!input.addressSignature) {
    refuse(
      'address_proof_required',
      `Prove that you control ${address}: sign the message "${message}" with its key (EIP-191 personal_sign) and ` +
        'send it as addressSignature, or omit brandAddress and pts generates one',
    );
  }
  const valid = await verifyMessage({ address, message, signature: input.addressSignature as Hex }).catch(() => false);
  if (!valid) {
    refuse(
      'address_proof_invalid',
      `addressSignature is not ${address}'s EIP-191 signature of "${message}" (sign exactly that text with that address's key)`,
    );
  }
}

/** 409 when a brand already holds `domain` as its website domain or a verified domain. */
async function requireUnheldDomain(db: Kysely<DB>, domain: string) {
  const holder = await db
    .selectFrom('brands')
    .select('address')
    .where((eb) =>
      eb.or([
        eb(eb.fn('lower', ['website_domain']), '=', domain.toLowerCase()),
        sql<boolean>`exists (select 1 from jsonb_array_elements_text(brands.verified_domains) as d(domain) where lower(d.domain) = ${domain.toLowerCase()})`,
      ]),
    )
    .limit(1)
    .executeTakeFirst();
  if (holder) {
    throw new AppError(
      'CONFLICT',
      `${domain} is already the domain of a pts brand (check_brand shows it); a domain is claimed once, by DNS verification of its owner`,
      { field: 'website', value: domain, reason: 'domain_taken' },
    );
  }
}

/**
 * Of the brands a lookup by `domain` found, the ones that may answer for it: those that proved it (or a parent)
 * through DNS when any did, so an unverified claimant never shadows the verified owner; all of them otherwise.
 */
export function domainHolders<T extends { verifiedDomains: string[] }>(brands: T[], domain: string): T[] {
  const verified = brands.filter((brand) => brand.verifiedDomains.some((owned) => hostMatchesDomain(domain, owned)));
  return verified.length > 0 ? verified : brands;
}
