<?php
/**
 * Signed calls to core-api, server side only: the browser never sees the security key and never calls
 * core-api. Every request carries X-PTS-Timestamp and X-PTS-Signature (Pts_Signer).
 *
 * @package PtsLoyalty
 */

defined( 'ABSPATH' ) || exit;

final class Pts_Core_Client {
	/** Seconds to wait for core-api; a perk redemption waits for its on-chain claim, so it gets longer. */
	public const TIMEOUT_SECONDS        = 10;
	public const REDEEM_TIMEOUT_SECONDS = 30;

	private Pts_Settings $settings;

	public function __construct( Pts_Settings $settings ) {
		$this->settings = $settings;
	}

	public function settings(): Pts_Settings {
		return $this->settings;
	}

	/** The configured brand id (lowercase address). */
	public function brand_id(): string {
		return (string) $this->settings->get( 'brand_id' );
	}

	/**
	 * A signed GET. Path segments must already be encoded (use self::segment()).
	 *
	 * @param array<string,scalar> $query
	 * @return array{status:int,body:array<string,mixed>}|WP_Error
	 */
	public function get( string $path, array $query = array(), bool $signed = true ) {
		if ( $query ) {
			$path .= '?' . http_build_query( $query, '', '&', PHP_QUERY_RFC3986 );
		}
		return $this->request( 'GET', $path, null, self::TIMEOUT_SECONDS, $signed );
	}

	/**
	 * A signed POST with a JSON body.
	 *
	 * @param array<string,mixed> $body
	 * @return array{status:int,body:array<string,mixed>}|WP_Error
	 */
	public function post( string $path, array $body, int $timeout = self::TIMEOUT_SECONDS ) {
		return $this->request( 'POST', $path, $body, $timeout, true );
	}

	/** One URL path segment, encoded (emails carry `@` and `+`). */
	public static function segment( string $value ): string {
		return rawurlencode( $value );
	}

	/**
	 * @param array<string,mixed>|null $body
	 * @return array{status:int,body:array<string,mixed>}|WP_Error A WP_Error `api_error` when core-api cannot be reached or answers garbage.
	 */
	private function request( string $method, string $path, ?array $body, int $timeout, bool $signed ) {
		if ( ! $this->settings->is_configured() ) {
			return new WP_Error( 'not_configured', __( 'The loyalty program is not set up yet. Please try again later.', 'pts-loyalty' ), array( 'status' => 500 ) );
		}
		$base   = (string) $this->settings->get( 'api_url' );
		$prefix = (string) ( wp_parse_url( $base, PHP_URL_PATH ) ?? '' );
		$raw    = null === $body ? '' : (string) wp_json_encode( $body );
		$headers = array( 'Accept' => 'application/json' );
		if ( null !== $body ) {
			$headers['Content-Type'] = 'application/json';
		}
		if ( $signed ) {
			$headers += Pts_Signer::headers( (string) $this->settings->get( 'security_key' ), time(), $method, untrailingslashit( $prefix ) . $path, $raw );
		}
		$started  = microtime( true );
		$response = wp_remote_request(
			untrailingslashit( $base ) . $path,
			array(
				'method'      => $method,
				'headers'     => $headers,
				'body'        => null === $body ? null : $raw,
				'timeout'     => $timeout,
				'redirection' => 0,
				'user-agent'  => 'pts-loyalty/' . PTS_LOYALTY_VERSION . '; WordPress',
			)
		);
		$elapsed = (int) round( ( microtime( true ) - $started ) * 1000 );
		// Only the path's route is logged: user identifiers in it are personal data.
		$route = (string) preg_replace( '#/[^/?]*@[^/?]*#', '/…', strtok( $path, '?' ) );
		if ( is_wp_error( $response ) ) {
			Pts_Debug_Log::write( $this->settings, sprintf( '%s %s failed after %d ms: %s', $method, $route, $elapsed, $response->get_error_code() ) );
			return self::unreachable();
		}
		$status = (int) wp_remote_retrieve_response_code( $response );
		Pts_Debug_Log::write( $this->settings, sprintf( '%s %s -> %d in %d ms', $method, $route, $status, $elapsed ) );
		$decoded = json_decode( (string) wp_remote_retrieve_body( $response ), true );
		if ( ! is_array( $decoded ) ) {
			return self::unreachable();
		}
		return array(
			'status' => $status,
			'body'   => $decoded,
		);
	}

	/** What a site user sees when core-api is down, slow or answers something that is not JSON. */
	public static function unreachable(): WP_Error {
		return new WP_Error(
			'api_error',
			__( 'The rewards service is not answering right now. Nothing was changed; please try again in a few minutes.', 'pts-loyalty' ),
			array( 'status' => 500 )
		);
	}
}
