import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../../test/database.ts';
import * as customRuleIds from '../../db/migrations/2026_11_25_0100_custom_rule_ids.ts';

// Rules created before custom ids (spec 2.3) kept a uuid: the migration gives the custom ones `custom_…` ids.

let database: TestDatabase;
const brandId = `0x${'c1'.repeat(20)}`;

beforeAll(async () => {
  database = await createTestDatabase();
  await database.db
    .insertInto('brands')
    .values({
      address: brandId,
      name: 'Legacy',
      website_domain: 'legacy.example.com',
      security_key_hash: 'x',
      security_key_encrypted: 'x',
      api_key_hash: 'x',
      created_at: new Date(),
      updated_at: new Date(),
    })
    .execute();
  const rule = (eventType: string, id: string, isCustom: boolean) => ({
    id,
    brand_id: brandId,
    event_type: eventType,
    reward_amount: 10n,
    is_custom: isCustom,
    active: true,
    max_claims_per_user: 1,
    cooldown_hours: 24,
    detection_method: 'manual',
    detection_config: '{}',
  });
  await database.db
    .insertInto('event_rules')
    .values([
      rule('telegram_gm', randomUUID(), false),
      rule('account_creation', randomUUID(), false),
      rule('custom_quiz', 'custom_quiz', true),
    ])
    .execute();
});

afterAll(async () => {
  await database?.close();
});

describe('migration 2026_11_25_0100_custom_rule_ids', () => {
  it('renames custom rules that kept a uuid; defaults and custom_ types keep theirs; runs twice harmlessly', async () => {
    const before = await database.db.selectFrom('event_rules').selectAll().where('brand_id', '=', brandId).execute();
    await customRuleIds.up(database.db as never);
    const after = new Map(
      (await database.db.selectFrom('event_rules').selectAll().where('brand_id', '=', brandId).execute()).map((r) => [
        r.event_type,
        r,
      ]),
    );
    expect(after.get('telegram_gm')).toMatchObject({
      id: expect.stringMatching(/^custom_[0-9a-f]{16}$/),
      is_custom: true,
    });
    const defaultBefore = before.find((r) => r.event_type === 'account_creation');
    expect(after.get('account_creation')).toMatchObject({ id: defaultBefore?.id, is_custom: false });
    expect(after.get('custom_quiz')).toMatchObject({ id: 'custom_quiz', is_custom: true });
    const renamed = after.get('telegram_gm')?.id;
    await customRuleIds.up(database.db as never);
    const again = await database.db
      .selectFrom('event_rules')
      .select('id')
      .where('brand_id', '=', brandId)
      .where('event_type', '=', 'telegram_gm')
      .executeTakeFirstOrThrow();
    expect(again.id).toBe(renamed);
  });
});
