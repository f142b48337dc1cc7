import { SHOPIFY_VALUE_SOURCES } from '@pts/shared';
import { type CliCommand, UsageError } from '../cli-context.ts';
import { jsonOption, parseFlags, requireFlag } from '../flags.ts';
import { formatTable } from '../table.ts';

/** `pts shopify connect`: the brand's shop and webhook secret; prints the address to paste into Shopify. */
export const connectShopifyCommand: CliCommand = {
  usage:
    'pts shopify connect --brand ID --shop NAME.myshopify.com --secret S [--value subtotal|total] [--customers] [--json]',
  summary: 'connect a brand\'s Shopify shop: paid orders earn a purchase (docs/shop-program.md, "Shopify")',
  async run(args, context) {
    const flags = parseFlags(args, {
      brand: { type: 'string' },
      shop: { type: 'string' },
      secret: { type: 'string' },
      value: { type: 'string' },
      customers: { type: 'boolean' },
      ...jsonOption,
    });
    const brandId = requireFlag(flags.brand, 'brand');
    const shopDomain = requireFlag(flags.shop, 'shop');
    const secret = requireFlag(flags.secret, 'secret');
    const value = flags.value;
    if (value !== undefined && !(SHOPIFY_VALUE_SOURCES as readonly string[]).includes(value)) {
      throw new UsageError(`--value must be subtotal or total, got "${value}"`);
    }
    const connection = await context.client().connectShopify(brandId, {
      shopDomain,
      secret,
      ...(value ? { valueSource: value as 'subtotal' | 'total' } : {}),
      ...(flags.customers ? { customers: true } : {}),
    });
    if (flags.json) return context.printJson(connection);
    context.print(`Shopify shop ${connection.shopDomain} connected to ${connection.brandId}`);
    context.print(`  value          the order's ${connection.valueSource}`);
    context.print(`  webhook URL    ${connection.webhookUrl}`);
    context.print(`  topics         ${connection.topics.join(', ')}`);
    context.print(
      '  In Shopify: Settings → Notifications → Webhooks → Create webhook, JSON, for each topic, this URL.',
    );
  },
};

/** `pts shopify disconnect`: removes the brand's shop; deliveries it still sends answer 404. */
export const disconnectShopifyCommand: CliCommand = {
  usage: 'pts shopify disconnect --brand ID [--json]',
  summary: "disconnect a brand's Shopify shop: its secret is deleted, later deliveries answer 404",
  async run(args, context) {
    const flags = parseFlags(args, { brand: { type: 'string' }, ...jsonOption });
    const result = await context.client().disconnectShopify(requireFlag(flags.brand, 'brand'));
    if (flags.json) return context.printJson(result);
    context.print(`Shopify shop ${result.shopDomain} disconnected from ${result.brandId}`);
    context.print("  Remove the webhook subscriptions in the shop's admin too: pts now answers them 404.");
  },
};

/** `pts shopify deliveries`: what the shop sent and what pts did with it. */
export const shopifyDeliveriesCommand: CliCommand = {
  usage: 'pts shopify deliveries --brand ID [--json]',
  summary: "show a brand's Shopify connection and its last deliveries (topic, time, result, reason)",
  async run(args, context) {
    const flags = parseFlags(args, { brand: { type: 'string' }, ...jsonOption });
    const integration = await context.client().getShopify(requireFlag(flags.brand, 'brand'));
    if (flags.json) return context.printJson(integration);
    if (!integration.connection) {
      context.print(`No Shopify shop connected. Webhook URL once connected: ${integration.webhookUrl}`);
      return;
    }
    context.print(`${integration.connection.shopDomain} → ${integration.webhookUrl}`);
    if (integration.deliveries.length === 0) return context.print('No deliveries yet.');
    context.print(
      formatTable(
        ['RECEIVED', 'TOPIC', 'RESULT', 'PTS', 'REASON'],
        integration.deliveries.map((d) => [
          d.receivedAt,
          d.topic,
          d.result,
          d.rewardAmount === null ? '-' : String(d.rewardAmount),
          d.reason ?? '',
        ]),
      ),
    );
  },
};
