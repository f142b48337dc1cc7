import { WEBHOOK_DELIVERY_STATUSES, type WebhookDeliveryStatus } from '@pts/shared';
import { type CliCommand, UsageError } from '../cli-context.ts';
import { jsonOption, parseFlags, requireFlag } from '../flags.ts';
import { formatTable } from '../table.ts';

/** `pts webhook set`: the brand's endpoint URL; prints the signing secret when one is issued. */
export const setWebhookCommand: CliCommand = {
  usage: 'pts webhook set --brand ID --url URL [--rotate-secret] [--json]',
  summary: "set a brand's webhook URL (the signing secret is shown once, when issued)",
  async run(args, context) {
    const flags = parseFlags(args, {
      brand: { type: 'string' },
      url: { type: 'string' },
      'rotate-secret': { type: 'boolean' },
      ...jsonOption,
    });
    const brandId = requireFlag(flags.brand, 'brand');
    const url = requireFlag(flags.url, 'url');
    if (!URL.canParse(url)) throw new UsageError(`--url must be a URL, got "${url}"`);
    const webhook = await context
      .client()
      .setWebhook(brandId, { url, ...(flags['rotate-secret'] ? { rotateSecret: true } : {}) });
    if (flags.json) return context.printJson(webhook);
    context.print(`Webhook for ${webhook.brandId} → ${webhook.url}`);
    if (webhook.secret) {
      context.print(`  signing secret  ${webhook.secret}`);
      context.print('  Keep it: it is shown only once. Verify x-pts-signature with it (docs/webhooks.md).');
    } else {
      context.print('  signing secret unchanged (use --rotate-secret for a new one)');
    }
  },
};

/** `pts webhook test`. */
export const testWebhookCommand: CliCommand = {
  usage: 'pts webhook test --brand ID [--json]',
  summary: "send a webhook.test event to the brand's endpoint now and show the receiver's answer",
  async run(args, context) {
    const flags = parseFlags(args, { brand: { type: 'string' }, ...jsonOption });
    const result = await context.client().testWebhook(requireFlag(flags.brand, 'brand'));
    if (flags.json) return context.printJson(result);
    const answer = result.statusCode === null ? 'no answer' : `HTTP ${result.statusCode}`;
    context.print(`${result.delivered ? 'Delivered' : 'Not delivered'}: ${answer} in ${result.durationMs} ms`);
    if (result.error) context.print(`  ${result.error}`);
    context.print(`  delivery ${result.delivery.id} (event ${result.delivery.eventId})`);
  },
};

/** `pts webhook deliveries`. */
export const listWebhookDeliveriesCommand: CliCommand = {
  usage: `pts webhook deliveries --brand ID [--status ${['pending', 'delivered', 'failed', 'dead'].join('|')}] [--limit N] [--json]`,
  summary: "list a brand's webhook deliveries, newest first",
  async run(args, context) {
    const flags = parseFlags(args, {
      brand: { type: 'string' },
      status: { type: 'string' },
      limit: { type: 'string' },
      ...jsonOption,
    });
    const brandId = requireFlag(flags.brand, 'brand');
    const status = flags.status === undefined ? undefined : parseStatus(flags.status);
    const limit = flags.limit === undefined ? undefined : parseLimit(flags.limit);
    const deliveries = await context.client().listWebhookDeliveries(brandId, {
      ...(status ? { status } : {}),
      ...(limit !== undefined ? { limit } : {}),
    });
    if (flags.json) return context.printJson({ deliveries });
    if (deliveries.length === 0) {
      context.print(`No webhook deliveries for ${brandId}${status ? ` with status ${status}` : ''}.`);
      return;
    }
    context.print(
      formatTable(
        ['DELIVERY ID', 'TYPE', 'STATUS', 'ATTEMPTS', 'LAST', 'NEXT ATTEMPT', 'CREATED', 'ERROR'],
        deliveries.map((delivery) => [
          delivery.id,
          delivery.type,
          delivery.status,
          String(delivery.attempts),
          delivery.lastStatusCode === null ? '-' : String(delivery.lastStatusCode),
          delivery.nextAttemptAt ?? '-',
          delivery.createdAt,
          (delivery.lastError ?? '').slice(0, 60),
        ]),
      ),
    );
  },
};

/** `pts webhook replay`. */
export const replayWebhookCommand: CliCommand = {
  usage: 'pts webhook replay --delivery ID [--json]',
  summary: 're-queue a webhook delivery (dead ones too) with a fresh set of attempts',
  async run(args, context) {
    const flags = parseFlags(args, { delivery: { type: 'string' }, ...jsonOption });
    const delivery = await context.client().replayWebhookDelivery(requireFlag(flags.delivery, 'delivery'));
    if (flags.json) return context.printJson(delivery);
    context.print(`Delivery ${delivery.id} re-queued (event ${delivery.eventId}, ${delivery.type})`);
  },
};

function parseStatus(value: string): WebhookDeliveryStatus {
  const status = WEBHOOK_DELIVERY_STATUSES.find((candidate) => candidate === value.trim());
  if (!status) throw new UsageError(`--status must be one of ${WEBHOOK_DELIVERY_STATUSES.join(', ')}, got "${value}"`);
  return status;
}

function parseLimit(value: string): number {
  const number = /^\d+$/.test(value.trim()) ? Number(value.trim()) : Number.NaN;
  if (!Number.isSafeInteger(number) || number < 1 || number > 500) {
    throw new UsageError(`--limit must be a whole number from 1 to 500, got "${value}"`);
  }
  return number;
}
