import { timingSafeEqual } from 'node:crypto';
import { Resolver } from 'node:dns/promises';
import { ADDRESS_PATTERN, AppError, type Clock } from '@pts/shared';
import type { Logger } from 'pino';
import type { Database } from '../../db/database.ts';
import { hostMatchesDomain } from '../../http/cors.ts';
import { hashSecret } from '../../security/secret-box.ts';
import type { ChangeNotifier } from '../brands/brand-changes.ts';
import { insertAuditEntry } from '../brands/brands.repository.ts';
import { getBrand } from '../brands/brands.service.ts';
import { addVerifiedDomain, findBrandForDns } from './dns.repository.ts';

/** Resolves TXT records; injectable so tests use a local DNS server. */
export type TxtResolver = (hostname: string) => Promise<string[][]>;

/** Why a domain is or is not configured; returned to the caller so a brand can fix its record. */
export type DnsVerificationReason =
  | 'verified'
  | 'no_record'
  | 'malformed_record'
  | 'unknown_brand'
  | 'api_key_mismatch'
  | 'domain_mismatch';

export interface VerifyDnsResult {
  success: true;
  domain: string;
  dnsConfigured: boolean;
  /** Brand ID named by the record (lowercase); null when no well-formed record exists. */
  brandId: string | null;
  reason: DnsVerificationReason;
}

export interface VerifyDnsDeps {
  db: Database;
  resolveTxt: TxtResolver;
  clock: Clock;
  logger?: Logger;
  /** Upper bound on one lookup whatever the resolver's own settings (default 5 s). */
  lookupTimeoutMs?: number;
  /** Who the audit log names when a domain is added; `verify-dns` (the public check) when absent. */
  actor?: string | undefined;
  /** Told when a domain is added, so the brand caches (CORS, directory answers) show it at once. */
  changes?: ChangeNotifier;
}

/** Domain verification by DNS (docs/brands.md), for `POST /pts-api/verify-dns`; one per process (compose.ts). */
export interface DnsService {
  /**
   * Looks up `_pts.<domain>` and, when it links the domain to its brand, records the domain as verified
   * (announced to the brand caches). `actor` names who asked in the audit log (`verify-dns` when absent). With
   * `brandId` (the brand portal), `domain` must be that brand's website domain or under it: 404 otherwise,
   * before any lookup.
   */
  verify(
    domain: string,
    options?: { actor?: string | undefined; brandId?: string | undefined },
  ): Promise<VerifyDnsResult>;
}

export function createDnsService(deps: Omit<VerifyDnsDeps, 'actor'>): DnsService {
  return {
    async verify(domain, options = {}) {
      if (options.brandId !== undefined) {
        const brand = await getBrand(deps, options.brandId);
        if (!hostMatchesDomain(domain, brand.domain)) {
          throw new AppError(
            'NOT_FOUND',
            `${domain} is not ${brand.domain} or one of its subdomains; change the website domain first`,
            { field: 'domain', value: domain },
          );
        }
      }
      return verifyDns({ ...deps, ...(options.actor === undefined ? {} : { actor: options.actor }) }, { domain });
    },
  };
}

/** A parsed `brand_id=<0x…>;api_key=<key>` record. */
export interface PtsTxtRecord {
  brandId: string;
  apiKey: string;
}

const DEFAULT_LOOKUP_TIMEOUT_MS = 5_000;
/** Resolver answers that mean "there is no such record" rather than "the lookup failed". */
const NO_RECORD_CODES = new Set(['ENOTFOUND', 'ENODATA']);
const RETRY_AFTER_SECONDS = 30;

/** Host of the verification record: `_pts.<domain>`. */
export function txtHostFor(domain: string): string {
  return `_pts.${domain}`;
}

/** The TXT value that links a domain to a brand (what `parsePtsTxtRecord` reads). */
export function ptsTxtRecordValue(brandId: string, apiKey: string): string {
  return `brand_id=${brandId.toLowerCase()};api_key=${apiKey}`;
}

/**
 * Parses one TXT value. Tolerates spaces around `=` and separators, any key case, `-` for `_`, quotes a DNS
 * console may have kept, and extra fields. Returns undefined unless both a valid brand_id and an api_key appear.
 */
export function parsePtsTxtRecord(text: string): PtsTxtRecord | undefined {
  const fields = new Map<string, string>();
  const normalized = text
    .trim()
    .replace(/^"|"$/g, '')
    .replace(/\s*=\s*/g, '=');
  for (const part of normalized.split(/[;,\s]+/)) {
    const separator = part.indexOf('=');
    if (separator <= 0) continue;
    const key = part.slice(0, separator).toLowerCase().replace(/-/g, '_');
    const value = part.slice(separator + 1).replace(/^["']|["']$/g, '');
    if (value && !fields.has(key)) fields.set(key, value);
  }
  const brandId = fields.get('brand_id') ?? fields.get('brandid');
  const apiKey = fields.get('api_key') ?? fields.get('apikey');
  if (!brandId || !apiKey || !ADDRESS_PATTERN.test(brandId)) return undefined;
  return { brandId: brandId.toLowerCase(), apiKey };
}

function apiKeyMatches(apiKey: string, storedHash: string): boolean {
  const presented = Buffer.from(hashSecret(apiKey), 'hex');
  const stored = Buffer.from(storedHash, 'hex');
  return presented.length === stored.length && timingSafeEqual(presented, stored);
}

async function lookupTxt(deps: VerifyDnsDeps, host: string): Promise<string[]> {
  const timeoutMs = deps.lookupTimeoutMs ?? DEFAULT_LOOKUP_TIMEOUT_MS;
  let timer: NodeJS.Timeout | undefined;
  try {
    const records = await Promise.race([
      deps.resolveTxt(host),
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(Object.assign(new Error(`DNS lookup of ${host} timed out`), { code: 'ETIMEOUT' })),
          timeoutMs,
        );
      }),
    ]);
    // A long TXT value arrives as several character-strings; the record is their concatenation.
    return records.map((chunks) => chunks.join(''));
  } catch (error) {
    const code = (error as { code?: unknown })?.code;
    if (typeof code === 'string' && NO_RECORD_CODES.has(code)) return [];
    deps.logger?.warn({ err: error, host }, 'DNS lookup failed');
    throw new AppError(
      'SERVICE_UNAVAILABLE',
      `Could not look up the TXT record at ${host} (${typeof code === 'string' ? code : 'lookup failed'}); try again later`,
      { reason: 'dns_lookup_failed', host, dnsError: typeof code === 'string' ? code : 'unknown' },
      { retryAfter: RETRY_AFTER_SECONDS },
    );
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Checks the `_pts.<domain>` TXT record (spec 4.5). Configured only when the record names an existing brand,
 * carries that brand's API key, and the domain is the brand's website domain or one of its subdomains; then
 * the domain is added to the brand's verified domains. No record is an answer (not configured), a failing
 * lookup is an error (503 SERVICE_UNAVAILABLE), so a caller never mistakes an outage for a missing record.
 */
export async function verifyDns(deps: VerifyDnsDeps, input: { domain: string }): Promise<VerifyDnsResult> {
  const { domain } = input;
  const texts = await lookupTxt(deps, txtHostFor(domain));
  const result = (reason: DnsVerificationReason, brandId: string | null): VerifyDnsResult => ({
    success: true,
    domain,
    dnsConfigured: reason === 'verified',
    brandId,
    reason,
  });
  if (texts.length === 0) return result('no_record', null);
  const candidates = texts.map(parsePtsTxtRecord).filter((record) => record !== undefined);
  if (candidates.length === 0) return result('malformed_record', null);

  let firstFailure: VerifyDnsResult | undefined;
  for (const candidate of candidates) {
    const brand = await findBrandForDns(deps.db, candidate.brandId);
    let reason: DnsVerificationReason;
    if (!brand) reason = 'unknown_brand';
    else if (!apiKeyMatches(candidate.apiKey, brand.api_key_hash)) reason = 'api_key_mismatch';
    else if (!hostMatchesDomain(domain, brand.website_domain)) reason = 'domain_mismatch';
    else {
      if (await addVerifiedDomain(deps.db, brand.address, domain, deps.clock.now())) {
        await insertAuditEntry(deps.db, {
          actor: deps.actor ?? 'verify-dns',
          action: 'brand.domain_verified',
          subject: brand.address,
          details: { domain },
          at: deps.clock.now(),
        });
        deps.changes?.emit({ kind: 'brand', brandId: brand.address });
      }
      return result('verified', brand.address);
    }
    firstFailure ??= result(reason, candidate.brandId);
  }
  return firstFailure ?? result('malformed_record', null);
}

export interface SystemTxtResolverOptions {
  /** Per-attempt timeout in ms (c-ares `timeout`); default 1500. */
  timeoutMs?: number;
  /** Attempts per server (c-ares `tries`); default 2. */
  tries?: number;
}

/**
 * TXT lookups through node's resolver (c-ares). `servers` (PTS_DNS_SERVERS: `1.1.1.1`, `127.0.0.1:5353`, …)
 * replaces the system's resolv.conf servers.
 */
export function createSystemTxtResolver(servers?: string[], options: SystemTxtResolverOptions = {}): TxtResolver {
  const resolver = new Resolver({ timeout: options.timeoutMs ?? 1_500, tries: options.tries ?? 2 });
  if (servers?.length) resolver.setServers(servers);
  return (hostname) => resolver.resolveTxt(hostname);
}
