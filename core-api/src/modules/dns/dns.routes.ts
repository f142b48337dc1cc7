import { domainSchema } from '@pts/shared';
import { z } from 'zod';
import type { Config } from '../../config.ts';
import { createRateLimit, type RateLimit } from '../../http/rate-limit.ts';
import { defineRoute, failure, type Route } from '../../http/route-table.ts';
import type { DnsService } from './dns.service.ts';

export const verifyDnsRequestSchema = z.object({ domain: domainSchema }).meta({ id: 'VerifyDnsRequest' });

export const verifyDnsResponseSchema = z
  .object({
    success: z.literal(true),
    domain: z.string(),
    dnsConfigured: z.boolean(),
    brandId: z.string().nullable(),
    reason: z.enum([
      'verified',
      'no_record',
      'malformed_record',
      'unknown_brand',
      'api_key_mismatch',
      'domain_mismatch',
    ]),
  })
  .meta({ id: 'VerifyDnsResponse' });

export type DnsRouterDeps = {
  /** The lookup and the verified-domain record (dns.service.ts; compose.ts builds it, with the brand changes). */
  dns: DnsService;
  config: Pick<Config, 'PTS_BODY_LIMIT_BYTES'>;
};

export interface DnsRouterOptions {
  /** Lookups one client IP may trigger per minute (each costs an outbound DNS query). Default 30. */
  lookupsPerMinutePerIp?: number;
  /** The per-IP limit itself (compose.ts builds it, shared by the replicas); overrides `lookupsPerMinutePerIp`. */
  limit?: RateLimit;
}

/** `POST /verify-dns`, relative to where it is mounted (the event handler's `/pts-api`). */
export function dnsRoutes(deps: DnsRouterDeps, options: DnsRouterOptions = {}): Route[] {
  const limit =
    options.limit ??
    createRateLimit({ name: 'verify-dns', points: options.lookupsPerMinutePerIp ?? 30, durationSeconds: 60 });
  return [
    defineRoute({
      method: 'post',
      path: '/verify-dns',
      summary: 'Check the _pts.<domain> TXT record that links a domain to a brand',
      description:
        'Looks up `_pts.<domain>` for `brand_id=<brand id>;api_key=<api key>`. `dnsConfigured` is true when the ' +
        "record names an existing brand, carries that brand's API key, and the domain is the brand's website " +
        "domain or one of its subdomains; the domain is then recorded in the brand's verified domains. A missing " +
        'record is 200 with `dnsConfigured: false`; a failing lookup (timeout, SERVFAIL) is 503.',
      tags: ['brands'],
      request: {
        body: verifyDnsRequestSchema,
        bodyLimitBytes: deps.config.PTS_BODY_LIMIT_BYTES,
        bodyReader: 'json-any-type',
      },
      responses: {
        200: { description: 'Lookup done; see dnsConfigured and reason', schema: verifyDnsResponseSchema },
        400: failure('domain missing or not a domain name'),
        429: failure('Too many lookups from this IP'),
        503: failure('The DNS lookup failed (timeout, SERVFAIL, refused); retry later'),
      },
      handle: async ({ body: { domain }, req, res }) => {
        await limit.consume(res, req.ip ?? 'unknown');
        return deps.dns.verify(domain);
      },
    }),
  ];
}
