<?php
/**
 * Settings: validation, the key never printed back, nonce and capability checks, "test connection", uninstall.
 *
 * @package PtsLoyaltyTests
 */

final class SettingsTest extends Pts_Test_Case {
	private function page(): Pts_Settings_Page {
		return new Pts_Settings_Page( new Pts_Settings(), pts_loyalty_client() );
	}

	/** Makes wp_die() throw, so refusals can be asserted in-process. */
	private function die_throws(): void {
		add_filter(
			'wp_die_handler',
			static fn() => static function ( $message, $title = '', $args = array() ) {
				throw new RuntimeException( 'wp_die: ' . ( is_string( $message ) ? $message : 'die' ) . ' status ' . ( is_array( $args ) ? (int) ( $args['response'] ?? 0 ) : 0 ) );
			}
		);
	}

	public function test_save_refuses_bad_values_and_says_what_to_fix(): void {
		$before = get_option( Pts_Settings::OPTION );
		$errors = ( new Pts_Settings() )->save(
			array(
				'api_url'      => 'ftp://example.com',
				'brand_id'     => 'my-brand',
				'security_key' => 'short',
			)
		);
		$this->assertCount( 3, $errors );
		$this->assertStringContainsString( 'http(s) URL', $errors[0] );
		$this->assertStringContainsString( '0x followed by 40', $errors[1] );
		$this->assertStringContainsString( 'security key', $errors[2] );
		$this->assertSame( $before, get_option( Pts_Settings::OPTION ) );
	}

	public function test_an_empty_key_keeps_the_stored_key_and_events_are_saved(): void {
		$before = get_option( Pts_Settings::OPTION );
		try {
			$errors = ( new Pts_Settings() )->save(
				array(
					'api_url'      => $before['api_url'] . '/',
					'brand_id'     => strtoupper( $before['brand_id'] ),
					'security_key' => '',
					'events'       => array( 'comment_approved' => '1' ),
				)
			);
			$this->assertSame( array(), $errors );
			$after = get_option( Pts_Settings::OPTION );
			$this->assertSame( $before['security_key'], $after['security_key'] );
			$this->assertSame( $before['api_url'], $after['api_url'] );
			$this->assertSame( $before['brand_id'], $after['brand_id'] );
			$this->assertTrue( $after['events']['comment_approved'] );
			$this->assertFalse( $after['events']['user_register'] );
		} finally {
			update_option( Pts_Settings::OPTION, $before );
		}
	}

	public function test_the_page_never_prints_the_key(): void {
		wp_set_current_user( 1 );
		ob_start();
		$this->page()->render();
		$html = (string) ob_get_clean();
		$key  = ( new Pts_Settings() )->get( 'security_key' );
		$this->assertStringContainsString( 'name="security_key"', $html );
		$this->assertStringContainsString( 'stored (leave empty to keep it)', $html );
		$this->assertStringNotContainsString( $key, $html );
		$this->assertStringContainsString( '_wpnonce', $html );
	}

	public function test_saving_needs_manage_options_and_a_valid_nonce(): void {
		$this->die_throws();
		$before = get_option( Pts_Settings::OPTION );
		$_POST  = array( 'api_url' => 'https://evil.example' );
		$_REQUEST = $_POST;
		try {
			$this->login( 'dana' );
			try {
				$this->page()->handle_save();
				$this->fail( 'a subscriber saved the settings' );
			} catch ( RuntimeException $refused ) {
				$this->assertStringContainsString( 'status 403', $refused->getMessage() );
			}
			wp_set_current_user( 1 );
			$_REQUEST['_wpnonce'] = 'forged1234';
			try {
				$this->page()->handle_save();
				$this->fail( 'a forged nonce saved the settings' );
			} catch ( RuntimeException $refused ) {
				$this->assertStringContainsString( 'wp_die', $refused->getMessage() );
			}
		} finally {
			$_POST    = array();
			$_REQUEST = array();
			remove_all_filters( 'wp_die_handler' );
		}
		$this->assertSame( $before, get_option( Pts_Settings::OPTION ) );
	}

	public function test_test_connection_says_what_is_wrong(): void {
		$this->assertSame( array( 'ok' => true ), array_intersect_key( $this->page()->test_connection(), array( 'ok' => 1 ) ) );

		$this->with_settings( array( 'security_key' => 'pts_sk_' . str_repeat( 'b', 40 ) ) );
		$result = $this->page()->test_connection();
		$this->assertFalse( $result['ok'] );
		$this->assertStringContainsString( 'security key does not belong to this brand', $result['messages'][0] );
		$this->tearDown();

		$this->with_settings( array( 'brand_id' => self::env( 'PTS_UNKNOWN_BRAND' ) ) );
		$result = $this->page()->test_connection();
		$this->assertFalse( $result['ok'] );
		$this->assertStringContainsString( 'does not know this brand id', $result['messages'][0] );
		$this->tearDown();

		$this->with_settings( array( 'api_url' => self::env( 'PTS_CORE_DOWN_URL' ) ) );
		$result = $this->page()->test_connection();
		$this->assertFalse( $result['ok'] );
		$this->assertStringContainsString( 'does not answer at ' . self::env( 'PTS_CORE_DOWN_URL' ), $result['messages'][0] );
	}

	public function test_uninstall_removes_the_settings_and_the_order_queue(): void {
		$before = get_option( Pts_Settings::OPTION );
		try {
			if ( ! defined( 'WP_UNINSTALL_PLUGIN' ) ) {
				define( 'WP_UNINSTALL_PLUGIN', 'pts-loyalty/pts-loyalty.php' );
			}
			Pts_Outbox::ensure_schema();
			include WP_PLUGIN_DIR . '/pts-loyalty/uninstall.php';
			$this->assertFalse( get_option( Pts_Settings::OPTION ) );
			global $wpdb;
			$this->assertNull( $wpdb->get_var( $wpdb->prepare( 'SHOW TABLES LIKE %s', Pts_Outbox::table() ) ), 'the order feed\'s queue is dropped' );
			$this->assertFalse( wp_next_scheduled( Pts_Outbox::CRON_HOOK ) );
		} finally {
			update_option( Pts_Settings::OPTION, $before, false );
		}
	}
}
