<?php
/**
 * The REST controller against the real core-api: spec 2.3 shapes, spec 7 codes, and outages.
 *
 * @package PtsLoyaltyTests
 */

final class RestControllerTest extends Pts_Test_Case {
	public function test_logged_out_calls_are_not_logged_in_401(): void {
		foreach ( array( '/checkin', '/redeem', '/claim-milestone' ) as $route ) {
			list( $status, $data ) = $this->rest( 'POST', $route );
			$this->assertRestError( 'not_logged_in', 401, $data, $status );
		}
		foreach ( array( '/streak', '/balance', '/achievements' ) as $route ) {
			list( $status, $data ) = $this->rest( 'GET', $route );
			$this->assertRestError( 'not_logged_in', 401, $data, $status );
		}
	}

	public function test_checkin_answers_the_spec_shape_then_already_claimed(): void {
		$this->login( 'dana' );
		list( $status, $data, $headers ) = $this->rest( 'POST', '/checkin' );
		$this->assertSame( 200, $status, wp_json_encode( $data ) );
		$this->assertSame( array( 'success', 'streak', 'reward', 'alreadyClaimed' ), array_keys( $data ) );
		$this->assertSame(
			array(
				'currentStreak'       => 1,
				'multiplier'          => 1.0,
				'nextMilestone'       => array(
					'days'  => 7,
					'bonus' => 100,
				),
				'unclaimedMilestones' => array(),
			),
			$data['streak']
		);
		$this->assertSame( 10, $data['reward'] );
		$this->assertFalse( $data['alreadyClaimed'] );
		$this->assertStringContainsString( 'no-store', $headers['Cache-Control'] );

		list( $status, $again ) = $this->rest( 'POST', '/checkin' );
		$this->assertSame( 200, $status );
		$this->assertTrue( $again['alreadyClaimed'] );
		$this->assertSame( 0, $again['reward'] );
		$this->assertSame( 1, $again['streak']['currentStreak'] );
	}

	public function test_the_streak_status_shows_the_check_in(): void {
		$this->login( 'dana' );
		list( $status, $data ) = $this->rest( 'GET', '/streak' );
		$this->assertSame( 200, $status, wp_json_encode( $data ) );
		$this->assertTrue( $data['checkedInToday'] );
		$this->assertSame( 1, $data['streak']['currentStreak'] );
		$this->assertSame( 1, $data['streak']['longestStreak'] );
	}

	public function test_redeem_needs_a_perk_id_that_is_a_uuid(): void {
		$this->login( 'dana' );
		list( $status, $data ) = $this->rest( 'POST', '/redeem' );
		$this->assertRestError( 'missing_perk_id', 400, $data, $status );
		foreach ( array( 'coffee', '12', "' OR 1=1 --", array( 'x' ) ) as $bad ) {
			list( $status, $data ) = $this->rest( 'POST', '/redeem', array( 'perkId' => $bad ) );
			$this->assertRestError( 'missing_perk_id', 400, $data, $status );
		}
	}

	public function test_redeeming_an_unknown_or_unaffordable_perk_is_redeem_failed(): void {
		$this->login( 'dana' );
		list( $status, $data ) = $this->rest( 'POST', '/redeem', array( 'perkId' => self::env( 'PTS_UNKNOWN_PERK_ID' ) ) );
		$this->assertRestError( 'redeem_failed', 400, $data, $status );
		$this->assertSame( 'This perk is not available any more.', $data['message'] );

		list( $status, $data ) = $this->rest( 'POST', '/redeem', array( 'perkId' => self::env( 'PTS_EXPENSIVE_PERK_ID' ) ) );
		$this->assertRestError( 'redeem_failed', 400, $data, $status );
		$this->assertMatchesRegularExpression( '/^You need \d+ more points for this perk \(you have \d+\)\.$/', $data['message'] );
	}

	public function test_claim_milestone_needs_days_and_a_reached_milestone(): void {
		$this->login( 'dana' );
		list( $status, $data ) = $this->rest( 'POST', '/claim-milestone' );
		$this->assertRestError( 'missing_milestone', 400, $data, $status );
		list( $status, $data ) = $this->rest( 'POST', '/claim-milestone', array( 'milestoneDays' => 'seven' ) );
		$this->assertRestError( 'missing_milestone', 400, $data, $status );
		list( $status, $data ) = $this->rest( 'POST', '/claim-milestone', array( 'milestoneDays' => 7 ) );
		$this->assertRestError( 'claim_failed', 400, $data, $status );
		$this->assertStringContainsString( 'not reached this milestone', $data['message'] );
		list( $status, $data ) = $this->rest( 'POST', '/claim-milestone', array( 'milestoneDays' => 8 ) );
		$this->assertRestError( 'claim_failed', 400, $data, $status );
	}

	public function test_the_leaderboard_is_public_in_the_spec_shape(): void {
		list( $status, $data ) = $this->rest(
			'GET',
			'/leaderboard',
			array(
				'metric' => 'streak',
				'period' => 'all',
				'limit'  => 5,
			)
		);
		$this->assertSame( 200, $status, wp_json_encode( $data ) );
		$this->assertSame( array( 'success', 'leaderboard', 'metric', 'period', 'total' ), array_keys( $data ) );
		$this->assertSame( 'streak', $data['metric'] );
		$this->assertSame( 'all', $data['period'] );
		$this->assertGreaterThanOrEqual( 1, $data['total'] );
		$first = $data['leaderboard'][0];
		$this->assertSame( array( 'userIdentifier', 'username', 'value', 'rank' ), array_keys( $first ) );
		$this->assertSame( 1, $first['rank'] );
		// Other people's emails are never shown whole.
		$this->assertStringNotContainsString( 'dana@example.com', wp_json_encode( $data ) );

		list( $status, $data ) = $this->rest( 'GET', '/leaderboard', array( 'period' => 'year' ) );
		$this->assertSame( 400, $status );
		$this->assertSame( 'rest_invalid_param', $data['code'] );
	}

	public function test_the_blocks_reads_answer_for_the_user(): void {
		$this->login( 'dana' );
		$this->assertSame( 10, $this->confirmed_points( 'dana@example.com' ) );
		list( $status, $data ) = $this->rest( 'GET', '/balance' );
		$this->assertSame( 200, $status, wp_json_encode( $data ) );
		$this->assertSame( array( 'success' => true, 'balance' => 10, 'pending' => 0 ), $data );
		list( $status, $data ) = $this->rest( 'GET', '/achievements' );
		$this->assertSame( 200, $status, wp_json_encode( $data ) );
		$this->assertNotEmpty( $data['achievements'] );
		list( $status, $data ) = $this->rest( 'GET', '/perks' );
		$this->assertSame( 200, $status, wp_json_encode( $data ) );
		$ids = array_column( $data['perks'], 'id' );
		$this->assertContains( self::env( 'PTS_EXPENSIVE_PERK_ID' ), $ids );
	}

	public function test_an_unconfigured_plugin_is_not_configured_500(): void {
		$this->login( 'dana' );
		$this->with_settings( array( 'security_key' => '' ) );
		list( $status, $data ) = $this->rest( 'POST', '/checkin' );
		$this->assertRestError( 'not_configured', 500, $data, $status );
	}

	public function test_core_api_down_is_api_error_without_php_warnings(): void {
		$this->login( 'dana' );
		$this->with_settings( array( 'api_url' => self::env( 'PTS_CORE_DOWN_URL' ) ) );
		$warnings = array();
		set_error_handler(
			static function ( int $severity, string $message ) use ( &$warnings ) {
				$warnings[] = $message;
				return true;
			},
			E_WARNING | E_NOTICE | E_USER_WARNING
		);
		try {
			foreach ( array( array( 'POST', '/checkin' ), array( 'POST', '/claim-milestone', array( 'milestoneDays' => 7 ) ), array( 'GET', '/balance' ), array( 'GET', '/leaderboard' ) ) as $call ) {
				list( $status, $data ) = $this->rest( $call[0], $call[1], $call[2] ?? array() );
				$this->assertRestError( 'api_error', 500, $data, $status );
				$this->assertStringContainsString( 'not answering right now', $data['message'] );
			}
			list( $status, $data ) = $this->rest( 'POST', '/redeem', array( 'perkId' => self::env( 'PTS_EXPENSIVE_PERK_ID' ) ) );
			$this->assertRestError( 'api_error', 500, $data, $status );
		} finally {
			restore_error_handler();
		}
		$this->assertSame( array(), $warnings );
	}

	public function test_a_wrong_security_key_is_api_error_for_the_user(): void {
		$this->login( 'dana' );
		$this->with_settings( array( 'security_key' => 'pts_sk_' . str_repeat( 'a', 40 ) ) );
		list( $status, $data ) = $this->rest( 'POST', '/checkin' );
		$this->assertRestError( 'api_error', 500, $data, $status );
		$this->assertStringContainsString( 'not set up correctly', $data['message'] );
	}
}
