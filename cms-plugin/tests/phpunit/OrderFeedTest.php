<?php
/**
 * The WooCommerce order feed against the WooCommerce stand-in (tests/support/woocommerce-stand-in.php, a
 * must-use plugin here) and the real core-api: a completed order is queued in the hook and sent by the cron
 * run as a signed `purchase` with its value; refunds are sent as reversals of their share; core-api down
 * keeps everything queued and retried; a refused order is not retried.
 *
 * @package PtsLoyaltyTests
 */

final class OrderFeedTest extends Pts_Test_Case {
	/** @var array<int,array{url:string,headers:array<string,string>,body:string}> */
	private array $requests = array();

	protected function setUp(): void {
		parent::setUp();
		$this->requests = array();
		add_action( 'http_api_debug', array( $this, 'record_request' ), 10, 5 );
	}

	protected function tearDown(): void {
		remove_action( 'http_api_debug', array( $this, 'record_request' ), 10 );
		parent::tearDown();
	}

	/** Every HTTP request WordPress made (after it was answered): to core-api, the only host the plugin calls. */
	public function record_request( $response, $context, $class, $args, $url ): void {
		if ( 'response' === $context && false !== strpos( (string) $url, '/pts-api/' ) ) {
			$this->requests[] = array(
				'url'     => (string) $url,
				'headers' => (array) ( $args['headers'] ?? array() ),
				'body'    => (string) ( $args['body'] ?? '' ),
			);
		}
	}

	private function feed_on( string $value = 'subtotal', array $more = array() ): void {
		$this->with_settings( array( 'wc_orders' => true, 'wc_order_value' => $value ) + $more );
	}

	/** What wp-cron runs (the tests' WordPress has DISABLE_WP_CRON; the hook is what a cron run calls). */
	private function run_cron(): void {
		do_action( Pts_Outbox::CRON_HOOK, 'prompt' );
	}

	private static function host(): string {
		return (string) wp_parse_url( home_url(), PHP_URL_HOST );
	}

	/** The on-chain balance of an email once it reaches `$expected` (reversals burn after their transaction). */
	private function points_become( string $email, int $expected ): void {
		$points = -1;
		for ( $attempt = 0; $attempt < 150; $attempt++ ) {
			$points = $this->confirmed_points( $email );
			if ( $expected === $points ) {
				break;
			}
			usleep( 100_000 );
		}
		$this->assertSame( $expected, $points, "points of $email" );
	}

	/** @return array<string,mixed> */
	private function request_body( int $index ): array {
		return (array) json_decode( $this->requests[ $index ]['body'], true );
	}

	public function test_nothing_is_queued_while_the_feed_is_off(): void {
		$this->with_settings( array( 'wc_orders' => false ) );
		$order = wc_create_order( array( 'billing_email' => 'off@example.com', 'total' => '10.00' ) );
		$order->update_status( 'completed' );
		$this->assertNull( Pts_Outbox::find( 'purchase:' . $order->get_id() ) );
		$this->run_cron();
		$this->assertSame( array(), $this->requests );
	}

	public function test_a_completed_order_is_queued_in_the_hook_and_sent_by_cron_as_a_signed_purchase(): void {
		$this->feed_on( 'subtotal' );
		$order = wc_create_order( array( 'billing_email' => 'Olga@Example.com', 'total' => '64.90', 'subtotal' => '52.45' ) );
		$order->update_status( 'processing' );
		$this->assertNull( Pts_Outbox::find( 'purchase:' . $order->get_id() ), 'paid is not completed' );

		$order->update_status( 'completed' );
		// The hook only queued: no request while the order was being completed, a cron run asked for.
		$this->assertSame( array(), $this->requests );
		$row = Pts_Outbox::find( 'purchase:' . $order->get_id() );
		$this->assertSame( 'pending', $row['status'] ?? null );
		$this->assertNotFalse( wp_next_scheduled( Pts_Outbox::CRON_HOOK, array( 'prompt' ) ) );

		$this->run_cron();
		$this->assertCount( 1, $this->requests );
		$request = $this->requests[0];
		$this->assertStringEndsWith( '/pts-api/manual-event', $request['url'] );
		$this->assertSame(
			array(
				'brandId'    => ( new Pts_Settings() )->get( 'brand_id' ),
				'eventType'  => 'purchase',
				'userEmail'  => 'olga@example.com',
				'externalId' => self::host() . ':wc_order_' . $order->get_id(),
				'value'      => array(
					'amount'   => '52.45',
					'currency' => 'USD',
				),
				'metadata'   => array(
					'platform'    => 'woocommerce',
					'site'        => self::host(),
					'orderId'     => (string) $order->get_id(),
					'valueSource' => 'subtotal',
				),
			),
			$this->request_body( 0 )
		);
		// Signed with the brand's key over exactly these bytes.
		$timestamp = (int) $request['headers']['X-PTS-Timestamp'];
		$this->assertSame(
			Pts_Signer::signature( (string) ( new Pts_Settings() )->get( 'security_key' ), $timestamp, 'POST', '/pts-api/manual-event', $request['body'] ),
			$request['headers']['X-PTS-Signature']
		);
		$this->assertSame( 'sent', Pts_Outbox::find( 'purchase:' . $order->get_id() )['status'] );
		// 2 pts per $1.00 of 52.45 = 104.
		$this->assertSame( 104, $this->confirmed_points( 'olga@example.com' ) );

		// Completed again (back to processing, then completed): queued once, paid once.
		$order->update_status( 'processing' );
		$order->update_status( 'completed' );
		$this->run_cron();
		$this->assertCount( 1, $this->requests );
		$this->assertSame( 104, $this->confirmed_points( 'olga@example.com' ) );
	}

	public function test_the_total_setting_sends_what_the_customer_paid(): void {
		$this->feed_on( 'total' );
		$order = wc_create_order( array( 'billing_email' => 'pia@example.com', 'total' => '30.05', 'subtotal' => '20.00' ) );
		$order->update_status( 'completed' );
		$this->run_cron();
		$this->assertSame( array( 'amount' => '30.05', 'currency' => 'USD' ), $this->request_body( 0 )['value'] );
		$this->assertSame( 60, $this->confirmed_points( 'pia@example.com' ) );
	}

	public function test_refunds_take_back_their_share_and_the_last_refund_takes_back_the_rest(): void {
		$this->feed_on( 'subtotal' );
		$order = wc_create_order( array( 'billing_email' => 'rita@example.com', 'total' => '100.00', 'subtotal' => '80.00' ) );
		$order->update_status( 'completed' );
		$this->run_cron();
		$this->assertSame( 160, $this->confirmed_points( 'rita@example.com' ) );

		// A quarter of the total back: WooCommerce fires woocommerce_refund_created and woocommerce_order_refunded.
		$refund = wc_create_refund( array( 'order_id' => $order->get_id(), 'amount' => '25.00' ) );
		$this->assertInstanceOf( WC_Order_Refund::class, $refund );
		$this->assertSame( 'pending', Pts_Outbox::find( 'reversal:' . $refund->get_id() )['status'] ?? null, 'queued once for both hooks' );
		$this->assertCount( 1, $this->requests, 'nothing sent in the refund hooks' );
		$this->run_cron();
		$this->assertCount( 2, $this->requests );
		$this->assertStringEndsWith( '/pts-api/reversals', $this->requests[1]['url'] );
		$this->assertSame(
			array(
				'brandId'    => ( new Pts_Settings() )->get( 'brand_id' ),
				'reversalId' => self::host() . ':wc_refund_' . $refund->get_id(),
				'eventType'  => 'purchase',
				'externalId' => self::host() . ':wc_order_' . $order->get_id(),
				// A quarter of the subtotal the purchase was worth.
				'value'      => array(
					'amount'   => '20.00',
					'currency' => 'USD',
				),
			),
			$this->request_body( 1 )
		);
		$this->assertSame( 'sent', Pts_Outbox::find( 'reversal:' . $refund->get_id() )['status'] );
		$this->points_become( 'rita@example.com', 120 );

		// The rest: the order is refunded in full, so no value is sent and core-api takes back all that is left.
		$last = wc_create_refund( array( 'order_id' => $order->get_id(), 'amount' => '75.00' ) );
		$this->assertSame( 'refunded', wc_get_order( $order->get_id() )->get_status() );
		$this->run_cron();
		$this->assertCount( 3, $this->requests );
		$this->assertArrayNotHasKey( 'value', $this->request_body( 2 ) );
		$this->assertSame( self::host() . ':wc_refund_' . $last->get_id(), $this->request_body( 2 )['reversalId'] );
		$this->points_become( 'rita@example.com', 0 );
	}

	public function test_core_api_down_keeps_the_order_and_its_refund_queued_and_retries_later(): void {
		$core = (string) ( new Pts_Settings() )->get( 'api_url' );
		$this->feed_on( 'subtotal', array( 'api_url' => self::env( 'PTS_CORE_DOWN_URL' ) ) );
		$order = wc_create_order( array( 'billing_email' => 'sam@example.com', 'total' => '12.00' ) );
		$started = microtime( true );
		$order->update_status( 'completed' );
		$refund = wc_create_refund( array( 'order_id' => $order->get_id(), 'amount' => '2.00' ) );
		$this->assertLessThan( 1.0, microtime( true ) - $started, 'completing and refunding never wait for core-api' );

		$this->run_cron();
		$purchase = Pts_Outbox::find( 'purchase:' . $order->get_id() );
		$this->assertSame( 'pending', $purchase['status'] );
		$this->assertSame( '1', (string) $purchase['attempts'] );
		$this->assertSame( 'api_error', $purchase['last_result'] );
		$this->assertGreaterThanOrEqual( time() + 55, (int) $purchase['next_attempt_at'], 'retried after a minute' );
		// The refund waits for its order: not attempted.
		$this->assertSame( '0', (string) Pts_Outbox::find( 'reversal:' . $refund->get_id() )['attempts'] );

		// A run before the retry is due sends nothing.
		$this->run_cron();
		$this->assertSame( '1', (string) Pts_Outbox::find( 'purchase:' . $order->get_id() )['attempts'] );

		// core-api is back and the retry is due (as a minute later): the order, then its refund.
		$this->feed_on( 'subtotal', array( 'api_url' => $core ) );
		global $wpdb;
		$wpdb->update( Pts_Outbox::table(), array( 'next_attempt_at' => time() - 1 ), array( 'job_key' => 'purchase:' . $order->get_id() ) );
		$this->run_cron();
		$this->assertSame( 'sent', Pts_Outbox::find( 'purchase:' . $order->get_id() )['status'] );
		$this->assertSame( 'sent', Pts_Outbox::find( 'reversal:' . $refund->get_id() )['status'] );
		// 24 pts for $12.00, then a sixth taken back.
		$this->points_become( 'sam@example.com', 20 );
	}

	public function test_an_order_core_api_refuses_is_not_retried_and_its_refund_is_skipped(): void {
		$this->feed_on( 'subtotal' );
		$order = wc_create_order( array( 'billing_email' => 'tom@example.com', 'total' => '10.00', 'currency' => 'EUR' ) );
		$order->update_status( 'completed' );
		$this->run_cron();
		$row = Pts_Outbox::find( 'purchase:' . $order->get_id() );
		$this->assertSame( 'refused', $row['status'] );
		$this->assertStringStartsWith( '400', $row['last_result'] );
		$this->assertStringContainsString( 'USD', $row['last_result'], 'core-api says which currency to send' );

		$refund = wc_create_refund( array( 'order_id' => $order->get_id(), 'amount' => '10.00' ) );
		$this->run_cron();
		$this->assertSame( 'skipped', Pts_Outbox::find( 'reversal:' . $refund->get_id() )['status'] );
		$this->assertCount( 1, $this->requests, 'the refund of an order that earned nothing is not sent' );
		$this->assertSame( 0, $this->confirmed_points( 'tom@example.com' ) );
	}

	public function test_the_debug_log_names_each_step_without_personal_data(): void {
		$this->feed_on( 'subtotal', array( 'debug_log' => true ) );
		$log      = (string) tempnam( sys_get_temp_dir(), 'pts-debug' );
		$previous = ini_set( 'error_log', $log );
		try {
			$order = wc_create_order( array( 'billing_email' => 'uma@example.com', 'total' => '5.00' ) );
			$order->update_status( 'completed' );
			$this->run_cron();
		} finally {
			ini_set( 'error_log', (string) $previous );
		}
		$lines = (string) file_get_contents( $log );
		unlink( $log );
		$id = $order->get_id();
		$this->assertStringContainsString( "[pts-loyalty] order feed: queued purchase:$id", $lines );
		$this->assertStringContainsString( '[pts-loyalty] POST /pts-api/manual-event -> 200', $lines );
		$this->assertStringContainsString( "[pts-loyalty] order feed: sent purchase:$id -> 200", $lines );
		$this->assertStringNotContainsString( 'uma@example.com', $lines );
	}

	public function test_settings_store_the_feed_and_refuse_an_unknown_value_source(): void {
		$before = get_option( Pts_Settings::OPTION );
		try {
			$errors = ( new Pts_Settings() )->save( array( 'wc_orders' => '1', 'wc_order_value' => 'gross' ) );
			$this->assertCount( 1, $errors );
			$this->assertStringContainsString( '"subtotal"', $errors[0] );
			$this->assertSame( $before, get_option( Pts_Settings::OPTION ) );

			$this->assertSame( array(), ( new Pts_Settings() )->save( array( 'api_url' => $before['api_url'], 'brand_id' => $before['brand_id'], 'wc_orders' => '1', 'wc_order_value' => 'total' ) ) );
			$after = get_option( Pts_Settings::OPTION );
			$this->assertTrue( $after['wc_orders'] );
			$this->assertSame( 'total', $after['wc_order_value'] );

			wp_set_current_user( 1 );
			ob_start();
			( new Pts_Settings_Page( new Pts_Settings(), pts_loyalty_client() ) )->render();
			$html = (string) ob_get_clean();
			$this->assertMatchesRegularExpression( '/<input type="checkbox" name="wc_orders" value="1"\s+checked/', $html );
			$this->assertStringContainsString( '<option value="total" selected', $html );
			$this->assertStringContainsString( 'Waiting: ', $html );
		} finally {
			update_option( Pts_Settings::OPTION, $before, false );
		}
	}
}
