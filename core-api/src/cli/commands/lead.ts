import type { GrowthLead } from '@pts/shared';
import { type CliCommand, UsageError } from '../cli-context.ts';
import { jsonOption, parseFlags } from '../flags.ts';
import { formatTable } from '../table.ts';

/** `pts lead list`: the growth leads agents sent with `request_growth_info` (docs/agent-api/growth.md). */
export const listLeadsCommand: CliCommand = {
  usage: 'pts lead list [--since ISO-TIME] [--limit N] [--json]',
  summary: 'list growth leads (businesses that asked to be contacted), newest first',
  async run(args, context) {
    const flags = parseFlags(args, { since: { type: 'string' }, limit: { type: 'string' }, ...jsonOption });
    const query: { limit?: number; since?: string } = {};
    if (flags.limit !== undefined) {
      const limit = /^\d+$/.test(flags.limit.trim()) ? Number(flags.limit) : Number.NaN;
      if (!Number.isSafeInteger(limit) || limit < 1 || limit > 500) {
        throw new UsageError(`--limit must be a whole number from 1 to 500, got "${flags.limit}"`);
      }
      query.limit = limit;
    }
    if (flags.since !== undefined) query.since = flags.since.trim();
    const leads = await context.client().listGrowthLeads(query);
    if (flags.json) return context.printJson(leads);
    if (leads.length === 0) return context.print('No growth leads yet.');
    context.print(formatTable(['RECEIVED', 'BUSINESS', 'CONTACT', 'WEBSITE', 'INDUSTRY', 'REQUESTS'], leads.map(row)));
  },
};

function row(lead: GrowthLead): string[] {
  return [lead.createdAt, lead.businessName, lead.contactEmail, lead.website, lead.industry, String(lead.requestCount)];
}
