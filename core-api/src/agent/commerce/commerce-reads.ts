import type { Database } from '../../db/database.ts';
import { resolveAccountKey, resolveMember } from '../../modules/accounts/accounts.service.ts';
import { previewEarnings } from '../../modules/events/events.service.ts';
import { readMemberActivity } from '../../modules/ledger/member-activity.ts';
import { readMemberPerkClaims, readOfferedPerks } from '../../modules/perks/perks.repository.ts';
import { listMemberCatalogue } from '../../modules/perks/perks.service.ts';
import { type BoundIntoDeps, type BoundToDatabase, bindDatabase, bindDatabaseIntoDeps } from '../agent-services.ts';
import { readAcceptedByType } from './commerce.repository.ts';

const commerceReadFunctions = {
  resolveAccountKey,
  resolveMember,
  readMemberActivity,
  readMemberPerkClaims,
  readOfferedPerks,
  readAcceptedByType,
  previewEarnings,
};
const commerceCatalogueFunctions = { listMemberCatalogue };

/**
 * The commerce tools' reads (commerce.tools.ts, member-earnings.ts): offered perks, a member's balance,
 * activity, claims and catalogue, and the event judge's earnings preview — the modules' own reads, bound by
 * compose.ts.
 */
export type CommerceReads = BoundToDatabase<typeof commerceReadFunctions> &
  BoundIntoDeps<typeof commerceCatalogueFunctions>;

export function createCommerceReads(db: Database): CommerceReads {
  return { ...bindDatabase(db, commerceReadFunctions), ...bindDatabaseIntoDeps(db, commerceCatalogueFunctions) };
}
