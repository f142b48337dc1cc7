import {
  type Brand,
  type CreatedBrand,
  MAX_KEY_GRACE_MINUTES,
  type RotateBrandKeysRequest,
  type UpdateBrandInput,
  xHandleInputSchema,
} from '@pts/shared';
import { type CliCommand, UsageError } from '../cli-context.ts';
import { jsonOption, parseFlags, parseOnOff, requireFlag } from '../flags.ts';
import { formatTable } from '../table.ts';

/** `pts brand create`: a new brand with its keys and the default rules. */
export const createBrandCommand: CliCommand = {
  usage: 'pts brand create --name NAME --domain DOMAIN [--address 0x…] [--automation on|off] [--json]',
  summary: 'create a brand; prints its Brand ID, security key and API key (shown once)',
  async run(args, context) {
    const flags = parseFlags(args, {
      name: { type: 'string' },
      domain: { type: 'string' },
      address: { type: 'string' },
      automation: { type: 'string' },
      ...jsonOption,
    });
    const input = {
      name: requireFlag(flags.name, 'name'),
      domain: requireFlag(flags.domain, 'domain'),
      ...(flags.address !== undefined && { address: flags.address.trim() }),
      ...(flags.automation !== undefined && { automation: parseOnOff(flags.automation, 'automation') }),
    };
    const brand = await context.client().createBrand(input);
    if (flags.json) return context.printJson(brand);
    printCreatedBrand(context.print, brand);
  },
};

/** `pts brand set`: change a brand's name, domain, automation or unsigned-events switch. */
export const setBrandCommand: CliCommand = {
  usage:
    'pts brand set --brand ID [--name NAME] [--domain DOMAIN] [--automation on|off] [--unsigned-events on|off] [--x-handle NAME|""] [--json]',
  summary: "change a brand's name, website domain, automation, whether it takes unsigned events, or its X handle",
  async run(args, context) {
    const flags = parseFlags(args, {
      brand: { type: 'string' },
      name: { type: 'string' },
      domain: { type: 'string' },
      automation: { type: 'string' },
      'unsigned-events': { type: 'string' },
      'x-handle': { type: 'string' },
      ...jsonOption,
    });
    const brandId = requireFlag(flags.brand, 'brand');
    const input: UpdateBrandInput = {};
    if (flags.name !== undefined) input.name = flags.name.trim();
    if (flags.domain !== undefined) input.domain = flags.domain.trim();
    if (flags.automation !== undefined) input.automation = parseOnOff(flags.automation, 'automation');
    if (flags['unsigned-events'] !== undefined) {
      input.unsignedEvents = parseOnOff(flags['unsigned-events'], 'unsigned-events');
    }
    if (flags['x-handle'] !== undefined) {
      const parsed = xHandleInputSchema.safeParse(flags['x-handle']);
      if (!parsed.success) {
        throw new UsageError(
          `--x-handle ${JSON.stringify(flags['x-handle'])} is not an X handle: 1 to 15 letters, digits or _ (a leading @ is fine; "" clears it)`,
        );
      }
      input.xHandle = parsed.data;
    }
    if (Object.keys(input).length === 0) {
      throw new UsageError('give at least one of --name, --domain, --automation, --unsigned-events, --x-handle');
    }
    const brand = await context.client().updateBrand(brandId, input);
    if (flags.json) return context.printJson(brand);
    context.print(`Updated brand ${brand.name} (${brand.brandId})`);
    printBrandFields(context.print, brand);
    if (input.xHandle) {
      context.print(
        `X rules the brand lacked were created with the X bot's defaults: npm run -s pts -- rule list --brand ${brand.brandId}`,
      );
    }
  },
};

/** `pts brand rotate-key`: new security key and API key, printed once; the old security key may stay valid a while. */
export const rotateBrandKeyCommand: CliCommand = {
  usage: 'pts brand rotate-key --brand ID [--grace-minutes N] [--json]',
  summary:
    "rotate a brand's security key and API key; prints the new keys once (the old security key verifies for --grace-minutes, default 0; end it sooner with end-old-key)",
  async run(args, context) {
    const flags = parseFlags(args, { brand: { type: 'string' }, 'grace-minutes': { type: 'string' }, ...jsonOption });
    const brandId = requireFlag(flags.brand, 'brand').trim();
    const input: RotateBrandKeysRequest = {};
    if (flags['grace-minutes'] !== undefined) {
      const text = flags['grace-minutes'].trim();
      const minutes = /^\d+$/.test(text) ? Number(text) : Number.NaN;
      if (!Number.isSafeInteger(minutes) || minutes > MAX_KEY_GRACE_MINUTES) {
        throw new UsageError(
          `--grace-minutes must be a whole number from 0 to ${MAX_KEY_GRACE_MINUTES} (a week), got "${flags['grace-minutes']}"`,
        );
      }
      input.graceMinutes = minutes;
    }
    const keys = await context.client().rotateBrandKeys(brandId, input);
    if (flags.json) return context.printJson(keys);
    context.print(`Rotated the keys of brand ${keys.brandId}`);
    context.print(`  security key  ${keys.securityKey}`);
    context.print(`  api key       ${keys.apiKey}`);
    context.print(
      keys.previousKeyValidUntil
        ? `The old security key still verifies until ${keys.previousKeyValidUntil}; the old API key is refused now.`
        : 'The old keys are refused now.',
    );
    context.print('Store both keys now: they are shown only once.');
  },
};

/** `pts brand end-old-key`: the security key the last rotation replaced stops verifying now, not at its grace's end. */
export const endOldBrandKeyCommand: CliCommand = {
  usage: 'pts brand end-old-key --brand ID [--json]',
  summary:
    'end the grace of the security key the last rotate-key replaced: only the new key verifies from now on (audited)',
  async run(args, context) {
    const flags = parseFlags(args, { brand: { type: 'string' }, ...jsonOption });
    const brandId = requireFlag(flags.brand, 'brand').trim();
    const keys = await context.client().endPreviousBrandKey(brandId);
    if (flags.json) return context.printJson(keys);
    context.print(
      `Ended the old security key of brand ${keys.brandId}: it would have verified until ${keys.endedKeyWasValidUntil} ` +
        'and is refused from now on. Only the current key verifies.',
    );
  },
};

/** `pts brand remove-domain`: a verified domain no longer speaks for the brand. */
export const removeBrandDomainCommand: CliCommand = {
  usage: 'pts brand remove-domain --brand ID --domain DOMAIN [--json]',
  summary: "take a domain out of a brand's verified domains (verify it again with its _pts TXT record)",
  async run(args, context) {
    const flags = parseFlags(args, { brand: { type: 'string' }, domain: { type: 'string' }, ...jsonOption });
    const brandId = requireFlag(flags.brand, 'brand');
    const domain = requireFlag(flags.domain, 'domain');
    const brand = await context.client().removeBrandDomain(brandId, domain);
    if (flags.json) return context.printJson(brand);
    context.print(`Removed ${domain.toLowerCase()} from the verified domains of ${brand.name} (${brand.brandId})`);
    printBrandFields(context.print, brand);
  },
};

/** `pts brand list`. */
export const listBrandsCommand: CliCommand = {
  usage: 'pts brand list [--json]',
  summary: 'list brands',
  async run(args, context) {
    const flags = parseFlags(args, { ...jsonOption });
    const brands = await context.client().listBrands();
    if (flags.json) return context.printJson({ brands });
    if (brands.length === 0) {
      context.print('No brands yet. Create one: pts brand create --name NAME --domain DOMAIN');
      return;
    }
    context.print(
      formatTable(
        ['BRAND ID', 'NAME', 'DOMAIN', 'AUTOMATION', 'TIER', 'CREATED'],
        brands.map((brand) => [
          brand.brandId,
          brand.name,
          brand.domain,
          onOff(brand.automation),
          brand.tier,
          brand.createdAt,
        ]),
      ),
    );
  },
};

function printCreatedBrand(print: (line: string) => void, brand: CreatedBrand): void {
  print(`Created brand ${brand.name}`);
  print(`  brand id      ${brand.brandId}`);
  printBrandFields(print, brand);
  print(`  security key  ${brand.securityKey}`);
  print(`  api key       ${brand.apiKey}`);
  print('Store both keys now: they are shown only once.');
}

function printBrandFields(print: (line: string) => void, brand: Brand): void {
  print(`  domain        ${brand.domain}`);
  if (brand.verifiedDomains.length > 0) print(`  verified      ${brand.verifiedDomains.join(', ')}`);
  print(`  automation    ${onOff(brand.automation)}`);
  print(`  unsigned      ${brand.unsignedEvents ? 'accepted (domain-authorized)' : 'refused: signed events only'}`);
  if (brand.xHandle) print(`  x handle      @${brand.xHandle}`);
  print(`  tier          ${brand.tier}`);
}

function onOff(value: boolean): string {
  return value ? 'on' : 'off';
}
