import {
  AppError,
  addressSchema,
  brandIdSchema,
  cleanString,
  DOMAIN_PATTERN,
  emailSchema,
  httpUrlSchema,
  MAX_KEY_GRACE_MINUTES,
} from '@pts/shared';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { z } from 'zod';
import { type AgentTool, defineAgentTool } from '../agent-tool.ts';
import type { AgentToolDeps } from '../agent-tool-deps.ts';
import { BRAND_CATEGORIES } from './discovery.tools.ts';

// Onboarding (spec 4.1, access `onboard`): new brands and their keys (docs/agent-api/program.md).

const text = (max: number) =>
  cleanString(z.string().min(1, 'must not be empty').max(max, `must be at most ${max} characters`));

/**
 * A business site's host: a domain name with at least two labels whose last is not numeric — not an IP
 * address (`127.0.0.1`) nor a single label (`localhost`), which the admin API allows for local brands but
 * which would make a publicly onboarded brand's authorized domain a machine's, not the business's.
 */
function isPublicDomainName(host: string): boolean {
  const labels = host.split('.');
  return DOMAIN_PATTERN.test(host) && labels.length >= 2 && !/^\d+$/.test(labels[labels.length - 1] ?? '');
}

/** The onboarding body (spec 2.2); the growth lead form reuses its business and contact fields. */
export const onboardBody = z.object({
  brandAddress: cleanString(addressSchema.transform((value) => value.toLowerCase()))
    .optional()
    .describe(
      "The brand's address (its Brand ID), one the brand controls: send addressSignature with it. Omit it and pts generates one",
    ),
  addressSignature: z
    .string()
    .regex(/^0x[0-9a-fA-F]+$/, 'must be a 0x-prefixed hex signature')
    .max(2000)
    .optional()
    .describe(
      'EIP-191 (personal_sign) signature by brandAddress of "I control <brandAddress lowercase> and register it as the pts brand of <website host>"',
    ),
  businessName: text(200),
  contactEmail: emailSchema,
  website: httpUrlSchema.refine((value) => URL.canParse(value) && isPublicDomainName(new URL(value).hostname), {
    message: 'must be the http(s) URL of a site with a domain name, such as https://shop.example.com',
  }),
  category: cleanString(z.string().transform((value) => value.toLowerCase())).pipe(
    z.enum(BRAND_CATEGORIES, { message: `must be one of ${BRAND_CATEGORIES.join(', ')}` }),
  ),
  description: text(2000),
});

function onboardBrandTool(d: Pick<AgentToolDeps, 'onboarding'>): AgentTool {
  return defineAgentTool({
    name: 'onboard_brand',
    method: 'post',
    path: '/onboarding/brands',
    summary: 'Register a new brand on pts, granted to this key',
    description:
      'Creates the brand `brandAddress` (its Brand ID) with the website host as its authorized domain, the ' +
      '`category` (retail, gaming, dining, travel: discovery filters on it) and the default event rules ' +
      '(account_creation 100, complete_survey 75, newsletter_subscribe 25, rate_experience 50, ' +
      'subscribe_renewal 200, form_submit 10), so it takes events at once. The brand is granted to this key ' +
      '(it may send its events and manage its keys). The answer carries the brand’s `securityKey` and ' +
      '`apiKey` this once: hand them to the brand owner. The address must be one the brand controls ' +
      '(`addressSignature`, EIP-191) or omitted (pts generates one); platform contracts and accounts and any ' +
      'address with contract code are refused (400). 409 when the address or the website domain is already a brand’s.',
    access: 'onboard',
    request: { body: onboardBody },
    result: z.object({
      brandId: z.string(),
      name: z.string(),
      domain: z.string(),
      category: z.string().nullable(),
      createdAt: z.string(),
      securityKey: z.string(),
      apiKey: z.string(),
      grantedToKey: z.string(),
      events: z.array(z.object({ eventId: z.string(), eventType: z.string(), rewardAmount: z.number().int() })),
    }),
    example: () => ({
      body: {
        businessName: 'Corner Bakery',
        contactEmail: 'owner@corner-bakery.example.com',
        // A domain no brand holds yet (each domain is claimed once); no brandAddress: pts generates one.
        website: `https://corner-bakery-${privateKeyToAccount(generatePrivateKey()).address.slice(2, 10).toLowerCase()}.example.com`,
        category: 'dining',
        description: 'A neighbourhood bakery rewarding regulars',
      },
    }),
    async handle({ body }, context) {
      if (!context.principal) throw new AppError('UNAUTHORIZED', 'Onboarding needs an agent key (X-PTS-Agent-Key)');
      return d.onboarding.onboardBrand(context.principal, {
        ...body,
        domain: new URL(body.website).hostname.toLowerCase(),
      });
    },
  });
}

function manageBrandKeysTool(d: Pick<AgentToolDeps, 'onboarding'>): AgentTool {
  return defineAgentTool({
    name: 'manage_brand_keys',
    method: 'post',
    path: '/onboarding/keys',
    summary: "Read, rotate or revoke a brand's API key and security key",
    description:
      '`status`: whether the keys are valid and when they were issued, rotated or revoked (never a secret). ' +
      '`rotate`: new `securityKey` (signs the brand’s events) and `apiKey`, returned this once; the old security ' +
      'key keeps verifying for `graceMinutes` (default 0: refused at once), the old API key stops at once. `revoke`: the keys stop working (signed events are refused) until a rotate. Only ' +
      'for a brand this key acts for (403 otherwise), e.g. one it onboarded.',
    access: 'onboard',
    request: {
      body: z.object({
        action: z.enum(['rotate', 'revoke', 'status'], { message: 'must be rotate, revoke or status' }),
        brandId: brandIdSchema,
        graceMinutes: z
          .number()
          .int()
          .min(0)
          .max(MAX_KEY_GRACE_MINUTES)
          .optional()
          .describe('rotate only: minutes the replaced security key still verifies signatures (default 0)'),
      }),
    },
    result: z.object({
      brandId: z.string(),
      active: z.boolean(),
      issuedAt: z.string(),
      rotatedAt: z.string().nullable(),
      revokedAt: z.string().nullable(),
      previousKeyValidUntil: z.string().nullable(),
      securityKey: z.string().optional(),
      apiKey: z.string().optional(),
    }),
    example: (fixture) => ({ body: { action: 'status', brandId: fixture.brandId } }),
    handle: ({ body }, context) => d.onboarding.manageBrandKeys(context.principal, body),
  });
}

/** The onboarding tools of the agent API (spec 4.1): new brands and their keys. */
export function onboardingTools(d: Pick<AgentToolDeps, 'onboarding'>): AgentTool[] {
  return [onboardBrandTool(d), manageBrandKeysTool(d)];
}
