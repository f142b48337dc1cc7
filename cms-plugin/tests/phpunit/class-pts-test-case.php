<?php
/**
 * Shared helpers: REST requests through rest_do_request() as a given user, settings overrides, env values.
 *
 * @package PtsLoyaltyTests
 */

use PHPUnit\Framework\TestCase;

abstract class Pts_Test_Case extends TestCase {
	/** @var array<string,callable> */
	private array $option_overrides = array();

	protected function tearDown(): void {
		foreach ( $this->option_overrides as $callback ) {
			remove_filter( 'pre_option_' . Pts_Settings::OPTION, $callback );
		}
		$this->option_overrides = array();
		wp_set_current_user( 0 );
		parent::tearDown();
	}

	protected static function env( string $name ): string {
		$value = getenv( $name );
		if ( false === $value || '' === $value ) {
			throw new RuntimeException( "env $name is required" );
		}
		return $value;
	}

	/** Runs the test with some settings changed (nothing is stored). @param array<string,mixed> $changes */
	protected function with_settings( array $changes ): void {
		$settings = array_merge( ( new Pts_Settings() )->all(), $changes );
		$callback = static fn() => $settings;
		add_filter( 'pre_option_' . Pts_Settings::OPTION, $callback );
		$this->option_overrides[] = $callback;
	}

	/**
	 * The spendable points of an email once its rewards are confirmed on chain (core-api's balance; `pending`
	 * overlaps the on-chain balance while a mined mint is not yet marked confirmed, so it is waited out).
	 */
	protected function confirmed_points( string $email ): int {
		$client = pts_loyalty_client();
		$path   = '/services/balance/' . Pts_Core_Client::segment( $client->brand_id() ) . '/' . Pts_Core_Client::segment( $email );
		for ( $attempt = 0; $attempt < 100; $attempt++ ) {
			$result = $client->get( $path );
			$this->assertIsArray( $result );
			$this->assertSame( 200, $result['status'], wp_json_encode( $result['body'] ) );
			if ( 0 === (int) $result['body']['pending'] ) {
				return (int) $result['body']['balance'];
			}
			usleep( 100_000 );
		}
		$this->fail( "rewards of $email still pending after 10 s" );
	}

	protected function login( string $login ): WP_User {
		$user = get_user_by( 'login', $login );
		$this->assertInstanceOf( WP_User::class, $user, "user $login exists" );
		wp_set_current_user( $user->ID );
		return $user;
	}

	/**
	 * @param array<string,mixed> $params
	 * @return array{0:int,1:array<string,mixed>,2:array<string,string>}
	 */
	protected function rest( string $method, string $route, array $params = array() ): array {
		$request = new WP_REST_Request( $method, '/pts/v1' . $route );
		if ( 'GET' === $method ) {
			$request->set_query_params( $params );
		} elseif ( $params ) {
			$request->set_header( 'Content-Type', 'application/json' );
			$request->set_body( (string) wp_json_encode( $params ) );
		}
		$response = rest_do_request( $request );
		$data     = rest_get_server()->response_to_data( $response, false );
		return array( $response->get_status(), $data, $response->get_headers() );
	}

	/** Asserts a WordPress-format error (spec 7): code, status, and a message for a person. @param array<string,mixed> $data */
	protected function assertRestError( string $code, int $status, array $data, int $actual_status ): void {
		$this->assertSame( $status, $actual_status, wp_json_encode( $data ) );
		$this->assertSame( $code, $data['code'] ?? null, wp_json_encode( $data ) );
		$this->assertSame( $status, $data['data']['status'] ?? null );
		$this->assertIsString( $data['message'] );
		$this->assertGreaterThan( 15, strlen( $data['message'] ) );
	}
}
