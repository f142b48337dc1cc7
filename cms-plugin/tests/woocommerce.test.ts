import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveMember } from '../../core-api/src/modules/accounts/accounts.service.ts';
import { readMemberLedger } from '../../core-api/src/modules/ledger/member-ledger.ts';
import { waitForMintsSettled } from '../../core-api/test/chain-helpers.ts';
import { type PluginFixture, startPluginFixture } from './support/fixture.ts';

// The WooCommerce order feed end to end: a real WordPress with the plugin installed from its zip and the
// WooCommerce stand-in (tests/support/woocommerce-stand-in.php) firing WooCommerce's hooks, its real wp-cron
// (wp-cron.php requested as WordPress's own spawn does), and the real core-api (PGlite + anvil): a completed
// order mints its purchase, a refund reverses it on chain, and the member ledger shows the reversal.

let fixture: PluginFixture;

beforeAll(async () => {
  fixture = await startPluginFixture({
    users: [],
    pages: [],
    woocommerce: true,
    settings: { wc_orders: true, wc_order_value: 'subtotal' },
  });
}, 240_000);

afterAll(async () => {
  await fixture?.stop();
});

/**
 * One run of WordPress's cron: wp-cron.php requested as a server's cron job does (the test site sets
 * DISABLE_WP_CRON, so page views do not spawn it; without `doing_wp_cron` the run takes its own lock).
 */
async function runWpCron(): Promise<void> {
  const response = await fetch(`${fixture.wordpress.url}/wp-cron.php`);
  await response.arrayBuffer();
  expect(response.status).toBe(200);
}

/** The feed's outbox row for a job key (status, attempts, last result). */
async function outboxRow(key: string): Promise<{ status: string; attempts: string; last_result: string } | null> {
  const out = await fixture.wordpress.php(`echo wp_json_encode( Pts_Outbox::find( ${JSON.stringify(key)} ) );`);
  return JSON.parse(out.trim()) as { status: string; attempts: string; last_result: string } | null;
}

const ledgerOf = async (email: string) =>
  readMemberLedger(
    fixture.platform.deps.db,
    fixture.brand.brandId.toLowerCase(),
    await resolveMember(fixture.platform.deps.db, email),
  );

describe('WooCommerce orders through the plugin', () => {
  let orderId: number;

  it('a completed order is queued by the hook, sent by wp-cron and mints its purchase', async () => {
    orderId = Number(
      await fixture.wordpress.php(`
        $order = wc_create_order( array( 'billing_email' => 'vera@example.com', 'total' => '50.00', 'subtotal' => '40.00' ) );
        $order->update_status( 'processing' );
        $order->update_status( 'completed' );
        echo $order->get_id();
      `),
    );
    expect(orderId).toBeGreaterThan(0);
    expect(await outboxRow(`purchase:${orderId}`)).toMatchObject({ status: 'pending' });
    const before = await fixture.platform.deps.db
      .selectFrom('events')
      .select('id')
      .where('user_email', '=', 'vera@example.com')
      .execute();
    expect(before).toEqual([]);

    await runWpCron();
    await expect.poll(async () => (await outboxRow(`purchase:${orderId}`))?.status, { timeout: 30_000 }).toBe('sent');
    const events = await fixture.platform.deps.db
      .selectFrom('events')
      .leftJoin('event_external_ids as x', 'x.event_id', 'events.id')
      .select(['events.event_type', 'status', 'reward_amount', 'value_minor', 'value_currency', 'x.external_id'])
      .where('user_email', '=', 'vera@example.com')
      .execute();
    expect(events).toEqual([
      {
        event_type: 'purchase',
        status: 'accepted',
        reward_amount: expect.anything(),
        value_minor: expect.anything(),
        value_currency: 'USD',
        external_id: `127.0.0.1:wc_order_${orderId}`,
      },
    ]);
    // 2 pts per $1.00 of the $40.00 subtotal.
    expect(Number(events[0]!.reward_amount)).toBe(80);
    expect(Number(events[0]!.value_minor)).toBe(4000);
    await waitForMintsSettled(fixture.platform);
    expect(await ledgerOf('vera@example.com')).toMatchObject({ earned: 80n, confirmed: 80n, reversed: 0n });
  });

  it('a partial refund, then the rest, are reversed on chain and the ledger shows both', async () => {
    const refundId = Number(
      await fixture.wordpress.php(`
        $refund = wc_create_refund( array( 'order_id' => ${orderId}, 'amount' => '12.50', 'reason' => 'one item back' ) );
        echo $refund->get_id();
      `),
    );
    await runWpCron();
    await expect.poll(async () => (await outboxRow(`reversal:${refundId}`))?.status, { timeout: 30_000 }).toBe('sent');
    // $12.50 of the $50.00 total is a quarter: $10.00 of the purchase's $40.00, so 20 of its 80 pts.
    await expect
      .poll(
        async () =>
          fixture.platform.deps.db
            .selectFrom('reward_reversals')
            .select(['reversal_id', 'status', 'pts', 'taken', 'debt', 'refunded_minor'])
            .where('user_email', '=', 'vera@example.com')
            .execute(),
        { timeout: 60_000 },
      )
      .toEqual([
        {
          reversal_id: `127.0.0.1:wc_refund_${refundId}`,
          status: 'confirmed',
          pts: expect.anything(),
          taken: expect.anything(),
          debt: expect.anything(),
          refunded_minor: expect.anything(),
        },
      ]);
    const [first] = await fixture.platform.deps.db
      .selectFrom('reward_reversals')
      .select(['pts', 'taken', 'debt', 'refunded_minor'])
      .where('user_email', '=', 'vera@example.com')
      .execute();
    expect([first!.pts, first!.taken, first!.debt, first!.refunded_minor].map(Number)).toEqual([20, 20, 0, 1000]);
    expect(await ledgerOf('vera@example.com')).toMatchObject({ earned: 60n, reversed: 20n });

    const lastId = Number(
      await fixture.wordpress.php(`
        $refund = wc_create_refund( array( 'order_id' => ${orderId}, 'amount' => '37.50' ) );
        echo $refund->get_id();
      `),
    );
    await runWpCron();
    await expect.poll(async () => (await outboxRow(`reversal:${lastId}`))?.status, { timeout: 30_000 }).toBe('sent');
    await expect
      .poll(
        async () =>
          (
            await fixture.platform.deps.db
              .selectFrom('reward_reversals')
              .select(['status', 'pts'])
              .where('user_email', '=', 'vera@example.com')
              .where('reversal_id', '=', `127.0.0.1:wc_refund_${lastId}`)
              .execute()
          ).map((row) => `${row.status} ${Number(row.pts)}`),
        { timeout: 60_000 },
      )
      .toEqual(['confirmed 60']);
    expect(await ledgerOf('vera@example.com')).toMatchObject({ earned: 0n, reversed: 80n });
  });

  it('three cron runs at once send each queued order once', async () => {
    const emails = Array.from({ length: 10 }, (_, i) => `w${i}@example.com`);
    const ids = (
      await fixture.wordpress.php(`
        foreach ( json_decode( '${JSON.stringify(emails)}', true ) as $email ) {
          $order = wc_create_order( array( 'billing_email' => $email, 'total' => '5.00' ) );
          $order->update_status( 'completed' );
          echo $order->get_id(), ' ';
        }
      `)
    )
      .trim()
      .split(' ');
    expect(ids).toHaveLength(10);
    // Each run writes down the requests it makes to core-api (the test's own hook, in each PHP process).
    const log = `${fixture.wordpress.root}/sent-${Date.now()}.log`;
    const run = () =>
      fixture.wordpress.php(`
        add_action( 'http_api_debug', static function ( $response, $context, $class, $args, $url ) {
          if ( 'response' === $context && false !== strpos( $url, '/pts-api/manual-event' ) ) {
            file_put_contents( '${log}', json_decode( $args['body'], true )['userEmail'] . PHP_EOL, FILE_APPEND | LOCK_EX );
          }
        }, 10, 5 );
        do_action( Pts_Outbox::CRON_HOOK );
      `);
    await Promise.all([run(), run(), run()]);
    const sent = (await fixture.wordpress.php(`echo file_get_contents( '${log}' );`)).trim().split('\n').sort();
    expect(sent).toEqual([...emails].sort());
    for (const id of ids) expect(await outboxRow(`purchase:${id}`)).toMatchObject({ status: 'sent' });
  });

  it('wrote no PHP warning or notice from the plugin to the debug log', () => {
    expect(fixture.wordpress.debugLog()).not.toMatch(/pts-loyalty/);
  });
});
