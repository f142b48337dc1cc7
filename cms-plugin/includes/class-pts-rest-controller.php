<?php
/**
 * REST routes under `pts/v1` (spec agent-plugin-integrations 4.2, 2.3, 7). The user comes from the WordPress
 * session (cookie + X-WP-Nonce) or an application password; their identity for core-api is their account
 * email. Every failure is a WP_Error with the spec's code, a status, and a message a site user understands.
 *
 * @package PtsLoyalty
 */

defined( 'ABSPATH' ) || exit;

final class Pts_Rest_Controller {
	public const NAMESPACE = 'pts/v1';
	/** The platform name core-api records for activity from this site. */
	public const PLATFORM = 'wordpress';

	/** Routes anyone may read; they carry no user data. */
	private const PUBLIC_ROUTES = array( 'leaderboard', 'perks' );

	private const UUID_PATTERN = '/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i';

	private Pts_Core_Client $client;

	public function __construct( Pts_Core_Client $client ) {
		$this->client = $client;
	}

	public function register(): void {
		add_action( 'rest_api_init', array( $this, 'register_routes' ) );
		add_filter( 'rest_authentication_errors', array( $this, 'spec_auth_error' ), 200 );
	}

	public function register_routes(): void {
		$user = array( $this, 'require_user' );
		register_rest_route(
			self::NAMESPACE,
			'/checkin',
			array(
				'methods'             => 'POST',
				'callback'            => array( $this, 'checkin' ),
				'permission_callback' => $user,
			)
		);
		register_rest_route(
			self::NAMESPACE,
			'/redeem',
			array(
				'methods'             => 'POST',
				'callback'            => array( $this, 'redeem' ),
				'permission_callback' => $user,
			)
		);
		register_rest_route(
			self::NAMESPACE,
			'/claim-milestone',
			array(
				'methods'             => 'POST',
				'callback'            => array( $this, 'claim_milestone' ),
				'permission_callback' => $user,
			)
		);
		register_rest_route(
			self::NAMESPACE,
			'/leaderboard',
			array(
				'methods'             => 'GET',
				'callback'            => array( $this, 'leaderboard' ),
				'permission_callback' => '__return_true',
				'args'                => array(
					'metric' => array(
						'type'    => 'string',
						'enum'    => array( 'pts_earned', 'activity', 'streak' ),
						'default' => 'pts_earned',
					),
					'period' => array(
						'type'    => 'string',
						'enum'    => array( 'week', 'month', 'all' ),
						'default' => 'week',
					),
					'limit'  => array(
						'type'    => 'integer',
						'minimum' => 1,
						'maximum' => 100,
						'default' => 10,
					),
				),
			)
		);
		register_rest_route(
			self::NAMESPACE,
			'/perks',
			array(
				'methods'             => 'GET',
				'callback'            => array( $this, 'perks' ),
				'permission_callback' => '__return_true',
			)
		);
		foreach ( array( 'streak', 'balance', 'tier', 'achievements' ) as $read ) {
			register_rest_route(
				self::NAMESPACE,
				'/' . $read,
				array(
					'methods'             => 'GET',
					'callback'            => array( $this, $read ),
					'permission_callback' => $user,
				)
			);
		}
	}

	/**
	 * A forged or stale nonce on one of our routes is answered with the spec's `not_logged_in` (WordPress would
	 * answer 403 `rest_cookie_invalid_nonce`): the request is treated as not authenticated, never as the
	 * cookie's user.
	 *
	 * @param WP_Error|null|true $result
	 * @return WP_Error|null|true
	 */
	public function spec_auth_error( $result ) {
		if ( ! is_wp_error( $result ) || 'rest_cookie_invalid_nonce' !== $result->get_error_code() ) {
			return $result;
		}
		$route = $this->own_route();
		if ( null === $route ) {
			return $result;
		}
		if ( in_array( $route, self::PUBLIC_ROUTES, true ) ) {
			// Public reads are the same for everyone: answered as to a visitor who is not logged in (a cached page
			// may carry another visitor's nonce).
			wp_set_current_user( 0 );
			return true;
		}
		return self::not_logged_in();
	}

	/** The route under our namespace (`leaderboard`, `checkin`…) of the current REST request, or null. */
	private function own_route(): ?string {
		global $wp;
		$route = trim( isset( $wp->query_vars['rest_route'] ) ? (string) $wp->query_vars['rest_route'] : '', '/' );
		return 0 === strpos( $route, self::NAMESPACE . '/' ) ? substr( $route, strlen( self::NAMESPACE ) + 1 ) : null;
	}

	/** @return true|WP_Error */
	public function require_user() {
		return is_user_logged_in() ? true : self::not_logged_in();
	}

	private static function not_logged_in(): WP_Error {
		return new WP_Error( 'not_logged_in', __( 'Please log in to take part in the rewards program.', 'pts-loyalty' ), array( 'status' => 401 ) );
	}

	/** The signed-in user's identity for core-api: their account email, lowercase. */
	private static function identity(): string {
		return strtolower( (string) wp_get_current_user()->user_email );
	}

	/** @return WP_REST_Response|WP_Error */
	public function checkin( WP_REST_Request $request ) {
		$result = $this->client->post(
			'/services/checkin',
			array(
				'brandId'        => $this->client->brand_id(),
				'userIdentifier' => self::identity(),
				'platform'       => self::PLATFORM,
				// Unique per call: two check-ins in one second would otherwise carry the same signature, and core-api
				// answers a repeated signature with the first call's answer. The day's check-in is unique anyway.
				'requestId'      => wp_generate_uuid4(),
			)
		);
		$failed = $this->failure( $result, 'checkin_failed', __( 'Your check-in did not go through. Please try again.', 'pts-loyalty' ) );
		if ( $failed ) {
			return $failed;
		}
		$body = $result['body'];
		return self::private_response(
			array(
				'success'        => true,
				'streak'         => self::streak_shape( is_array( $body['streak'] ?? null ) ? $body['streak'] : array() ),
				'reward'         => (int) ( $body['reward'] ?? 0 ),
				'alreadyClaimed' => (bool) ( $body['alreadyClaimed'] ?? false ),
			)
		);
	}

	/** @return WP_REST_Response|WP_Error */
	public function redeem( WP_REST_Request $request ) {
		$perk_id = $request->get_param( 'perkId' );
		if ( null === $perk_id || '' === $perk_id ) {
			return new WP_Error( 'missing_perk_id', __( 'Choose a perk to redeem (perkId is missing).', 'pts-loyalty' ), array( 'status' => 400 ) );
		}
		if ( ! is_string( $perk_id ) || ! preg_match( self::UUID_PATTERN, $perk_id ) ) {
			return new WP_Error( 'missing_perk_id', __( 'That perk does not exist: perkId must be the id of a perk in the store.', 'pts-loyalty' ), array( 'status' => 400 ) );
		}
		$result = $this->client->post(
			'/services/perks/redeem',
			array(
				'brandId'        => $this->client->brand_id(),
				'perkId'         => strtolower( $perk_id ),
				'userIdentifier' => self::identity(),
				'platform'       => self::PLATFORM,
			),
			Pts_Core_Client::REDEEM_TIMEOUT_SECONDS
		);
		$failed = $this->failure( $result, 'redeem_failed', __( 'The perk could not be redeemed. Nothing was spent; please try again.', 'pts-loyalty' ) );
		if ( $failed ) {
			return $failed;
		}
		$body = $result['body'];
		$perk = is_array( $body['perk'] ?? null ) ? $body['perk'] : null;
		return self::private_response(
			array(
				'success'          => true,
				'confirmationCode' => isset( $body['confirmationCode'] ) ? (string) $body['confirmationCode'] : null,
				'perk'             => $perk ? array(
					'id'       => (string) ( $perk['id'] ?? '' ),
					'name'     => (string) ( $perk['name'] ?? '' ),
					'cost'     => (int) ( $perk['cost'] ?? 0 ),
					'category' => (string) ( $perk['category'] ?? '' ),
				) : null,
			)
		);
	}

	/** @return WP_REST_Response|WP_Error */
	public function claim_milestone( WP_REST_Request $request ) {
		$days = $request->get_param( 'milestoneDays' );
		if ( null === $days || '' === $days ) {
			return new WP_Error( 'missing_milestone', __( 'Choose a milestone to claim (milestoneDays is missing).', 'pts-loyalty' ), array( 'status' => 400 ) );
		}
		if ( ! ( is_int( $days ) || ( is_string( $days ) && ctype_digit( $days ) ) ) || (int) $days < 1 || (int) $days > 3650 ) {
			return new WP_Error( 'missing_milestone', __( 'milestoneDays must be a whole number of days, such as 7 or 30.', 'pts-loyalty' ), array( 'status' => 400 ) );
		}
		$result = $this->client->post(
			'/services/streak/claim-milestone',
			array(
				'brandId'        => $this->client->brand_id(),
				'userIdentifier' => self::identity(),
				'milestoneDays'  => (int) $days,
				'requestId'      => wp_generate_uuid4(),
			)
		);
		$failed = $this->failure( $result, 'claim_failed', __( 'This milestone cannot be claimed.', 'pts-loyalty' ) );
		if ( $failed ) {
			return $failed;
		}
		return self::private_response(
			array(
				'success'   => true,
				'bonusPts'  => (int) ( $result['body']['bonusPts'] ?? 0 ),
				'milestone' => (int) ( $result['body']['milestone'] ?? $days ),
			)
		);
	}

	/** @return WP_REST_Response|WP_Error */
	public function leaderboard( WP_REST_Request $request ) {
		$period = (string) $request->get_param( 'period' );
		$result = $this->client->get(
			'/services/leaderboard/' . Pts_Core_Client::segment( $this->client->brand_id() ),
			array(
				'metric' => (string) $request->get_param( 'metric' ),
				'period' => $period,
				'limit'  => (int) $request->get_param( 'limit' ),
			),
			false
		);
		$failed = $this->failure( $result, 'api_error', __( 'The leaderboard is not available right now.', 'pts-loyalty' ) );
		if ( $failed ) {
			return $failed;
		}
		$rows = array();
		foreach ( (array) ( $result['body']['leaderboard'] ?? array() ) as $row ) {
			$rows[] = array(
				'userIdentifier' => (string) ( $row['userIdentifier'] ?? '' ),
				'username'       => (string) ( $row['username'] ?? '' ),
				'value'          => 0 + ( $row['value'] ?? 0 ),
				'rank'           => (int) ( $row['rank'] ?? 0 ),
			);
		}
		return rest_ensure_response(
			array(
				'success'     => true,
				'leaderboard' => $rows,
				'metric'      => (string) $request->get_param( 'metric' ),
				'period'      => $period,
				'total'       => (int) ( $result['body']['total'] ?? count( $rows ) ),
			)
		);
	}

	/** The brand's perks that can be redeemed now (public: the same for everyone). @return WP_REST_Response|WP_Error */
	public function perks( WP_REST_Request $request ) {
		$result = $this->client->get( '/services/perks/' . Pts_Core_Client::segment( $this->client->brand_id() ), array( 'available' => 'true' ), false );
		$failed = $this->failure( $result, 'api_error', __( 'The perk store is not available right now.', 'pts-loyalty' ) );
		if ( $failed ) {
			return $failed;
		}
		$perks = array();
		foreach ( (array) ( $result['body']['perks'] ?? array() ) as $perk ) {
			$perks[] = array(
				'id'              => (string) ( $perk['uuid'] ?? '' ),
				'name'            => (string) ( $perk['name'] ?? '' ),
				'description'     => (string) ( $perk['description'] ?? '' ),
				'category'        => (string) ( $perk['category'] ?? '' ),
				'cost'            => (int) ( $perk['cost'] ?? 0 ),
				'remainingSupply' => isset( $perk['remainingSupply'] ) ? (int) $perk['remainingSupply'] : null,
			);
		}
		return rest_ensure_response(
			array(
				'success' => true,
				'perks'   => $perks,
			)
		);
	}

	/** The user's streak status. @return WP_REST_Response|WP_Error */
	public function streak( WP_REST_Request $request ) {
		$result = $this->client->get( $this->user_path( '/services/streak/status' ) );
		$failed = $this->failure( $result, 'api_error', __( 'Your streak is not available right now.', 'pts-loyalty' ) );
		if ( $failed ) {
			return $failed;
		}
		$body = $result['body'];
		return self::private_response(
			array(
				'success'        => true,
				'streak'         => self::streak_shape( $body ) + array( 'longestStreak' => (int) ( $body['longestStreak'] ?? 0 ) ),
				'checkedInToday' => (bool) ( $body['checkedInToday'] ?? false ),
			)
		);
	}

	/** The user's spendable points (live on chain) and rewards still confirming. @return WP_REST_Response|WP_Error */
	public function balance( WP_REST_Request $request ) {
		$result = $this->client->get( $this->user_path( '/services/balance' ) );
		$failed = $this->failure( $result, 'api_error', __( 'Your balance is not available right now.', 'pts-loyalty' ) );
		if ( $failed ) {
			return $failed;
		}
		return self::private_response(
			array(
				'success' => true,
				'balance' => (int) ( $result['body']['balance'] ?? 0 ),
				'pending' => (int) ( $result['body']['pending'] ?? 0 ),
			)
		);
	}

	/**
	 * The user's VIP tier and what is left to the next one (core-api's `GET /services/tier`, docs/tiers.md);
	 * `tier: null` while the brand has no tiers, so the balance block shows none.
	 *
	 * @return WP_REST_Response|WP_Error
	 */
	public function tier( WP_REST_Request $request ) {
		$result = $this->client->get( $this->user_path( '/services/tier' ) );
		$failed = $this->failure( $result, 'api_error', __( 'Your tier is not available right now.', 'pts-loyalty' ) );
		if ( $failed ) {
			return $failed;
		}
		$body = $result['body'];
		if ( ! isset( $body['tier'] ) || ! is_string( $body['tier'] ) ) {
			return self::private_response(
				array(
					'success' => true,
					'tier'    => null,
				)
			);
		}
		$progress = is_array( $body['progress'] ?? null ) ? $body['progress'] : array();
		$next     = is_array( $body['next'] ?? null ) ? $body['next'] : null;
		return self::private_response(
			array(
				'success' => true,
				'tier'    => array(
					'name'       => $body['tier'],
					'multiplier' => (float) ( $body['multiplier'] ?? 1 ),
					// earned: pts; spent: an amount of the brand's currency (a decimal string).
					'basis'      => 'spent' === ( $progress['basis'] ?? '' ) ? 'spent' : 'earned',
					'current'    => (string) ( $progress['current'] ?? '0' ),
					'next'       => $next ? array(
						'name'      => (string) ( $next['name'] ?? '' ),
						'threshold' => (string) ( $next['threshold'] ?? '' ),
						'remaining' => (string) ( $progress['remaining'] ?? '' ),
					) : null,
				),
			)
		);
	}

	/** The user's achievements. @return WP_REST_Response|WP_Error */
	public function achievements( WP_REST_Request $request ) {
		$result = $this->client->get( $this->user_path( '/services/achievements' ) );
		$failed = $this->failure( $result, 'api_error', __( 'Your achievements are not available right now.', 'pts-loyalty' ) );
		if ( $failed ) {
			return $failed;
		}
		$list = array();
		foreach ( (array) ( $result['body']['achievements'] ?? array() ) as $item ) {
			$list[] = array(
				'id'          => (string) ( $item['id'] ?? '' ),
				'name'        => (string) ( $item['name'] ?? '' ),
				'description' => (string) ( $item['description'] ?? '' ),
				'progress'    => 0 + ( $item['progress'] ?? 0 ),
				'threshold'   => 0 + ( $item['threshold'] ?? 0 ),
				'unlocked'    => (bool) ( $item['unlocked'] ?? false ),
			);
		}
		return self::private_response(
			array(
				'success'       => true,
				'achievements'  => $list,
				'unlockedCount' => (int) ( $result['body']['unlockedCount'] ?? 0 ),
			)
		);
	}

	private function user_path( string $base ): string {
		return $base . '/' . Pts_Core_Client::segment( $this->client->brand_id() ) . '/' . Pts_Core_Client::segment( self::identity() );
	}

	/**
	 * Null when core-api answered 2xx; otherwise the WP_Error to return. A refusal of the user's request
	 * (400, 403, 404 for a perk, 409) gets `$code` and a message for the user; anything else (outage,
	 * misconfiguration such as a wrong key) is `api_error`.
	 *
	 * @param array{status:int,body:array<string,mixed>}|WP_Error $result
	 */
	private function failure( $result, string $code, string $fallback ): ?WP_Error {
		if ( is_wp_error( $result ) ) {
			return $result;
		}
		$status = $result['status'];
		if ( $status >= 200 && $status < 300 ) {
			return null;
		}
		$core_code = (string) ( $result['body']['code'] ?? '' );
		$details   = is_array( $result['body']['details'] ?? null ) ? $result['body']['details'] : array();
		if ( 401 === $status || 'BRAND_NOT_FOUND' === $core_code ) {
			// The site's settings are wrong: the user cannot fix that; the admin's "test connection" says what.
			return new WP_Error( 'api_error', __( 'The rewards program is not set up correctly on this site. Please tell the site owner.', 'pts-loyalty' ), array( 'status' => 500 ) );
		}
		if ( 'api_error' === $code ) {
			return new WP_Error( 'api_error', $fallback, array( 'status' => 500 ) );
		}
		$refused = in_array( $status, array( 400, 403, 409 ), true ) || 'PERK_NOT_FOUND' === $core_code || 'TRANSACTION_FAILED' === $core_code;
		if ( ! $refused ) {
			return Pts_Core_Client::unreachable();
		}
		return new WP_Error( $code, self::user_message( $core_code, $details, $fallback ), array( 'status' => 400 ) );
	}

	/** @param array<string,mixed> $details */
	private static function user_message( string $core_code, array $details, string $fallback ): string {
		switch ( $core_code ) {
			case 'INSUFFICIENT_BALANCE':
				/* translators: 1: points missing, 2: points the user has */
				return sprintf( __( 'You need %1$d more points for this perk (you have %2$d).', 'pts-loyalty' ), (int) ( $details['missing'] ?? 0 ), (int) ( $details['balance'] ?? 0 ) );
			case 'NO_WALLET':
				return __( 'You have no points yet: check in daily to earn some.', 'pts-loyalty' );
			case 'SOLD_OUT':
				return __( 'This perk is sold out.', 'pts-loyalty' );
			case 'CLAIM_LIMIT_REACHED':
				return __( 'You already hold as many of this perk as one person may.', 'pts-loyalty' );
			case 'PERK_UNAVAILABLE':
			case 'PERK_NOT_FOUND':
				return __( 'This perk is not available any more.', 'pts-loyalty' );
			case 'NOT_ELIGIBLE':
				return __( 'You do not meet the conditions for this perk yet.', 'pts-loyalty' );
			case 'TRANSACTION_FAILED':
				return __( 'The purchase did not go through and nothing was spent. Please try again.', 'pts-loyalty' );
			case 'CLAIM_FAILED':
				switch ( $details['reason'] ?? '' ) {
					case 'not_reached':
						return __( 'You have not reached this milestone yet: keep your streak going.', 'pts-loyalty' );
					case 'already_claimed':
						return __( 'You already claimed this milestone.', 'pts-loyalty' );
					case 'not_a_milestone':
						return __( 'There is no milestone for that number of days.', 'pts-loyalty' );
				}
				return $fallback;
		}
		return $fallback;
	}

	/**
	 * The spec 2.3 streak object.
	 *
	 * @param array<string,mixed> $streak
	 * @return array<string,mixed>
	 */
	private static function streak_shape( array $streak ): array {
		$next = is_array( $streak['nextMilestone'] ?? null ) ? $streak['nextMilestone'] : null;
		$unclaimed = array();
		foreach ( (array) ( $streak['unclaimedMilestones'] ?? array() ) as $milestone ) {
			$unclaimed[] = array(
				'days'  => (int) ( $milestone['days'] ?? 0 ),
				'bonus' => (int) ( $milestone['bonus'] ?? 0 ),
			);
		}
		return array(
			'currentStreak'       => (int) ( $streak['currentStreak'] ?? 0 ),
			'multiplier'          => (float) ( $streak['multiplier'] ?? 1 ),
			'nextMilestone'       => $next ? array(
				'days'  => (int) ( $next['days'] ?? 0 ),
				'bonus' => (int) ( $next['bonus'] ?? 0 ),
			) : null,
			'unclaimedMilestones' => $unclaimed,
		);
	}

	/** Per-user data: never stored by a page cache or a proxy. @param array<string,mixed> $data */
	private static function private_response( array $data ): WP_REST_Response {
		$response = new WP_REST_Response( $data, 200 );
		$response->header( 'Cache-Control', 'no-store, private' );
		return $response;
	}
}
