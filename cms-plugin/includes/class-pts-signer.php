<?php
/**
 * Brand signatures of core-api requests (docs/api/events.md): lowercase hex HMAC-SHA256, under the brand's
 * security key, of `timestamp.METHOD.path-with-query.raw-body`. Identical to `computeSignature` in
 * shared/src/signing.ts (a test compares both for the same input).
 *
 * @package PtsLoyalty
 */

defined( 'ABSPATH' ) || exit;

final class Pts_Signer {
	/** The signature of one request. */
	public static function signature( string $security_key, int $timestamp, string $method, string $path_with_query, string $body ): string {
		$payload = $timestamp . '.' . strtoupper( $method ) . '.' . $path_with_query . '.' . $body;
		return hash_hmac( 'sha256', $payload, $security_key );
	}

	/**
	 * The headers to add to a signed request.
	 *
	 * @return array<string,string>
	 */
	public static function headers( string $security_key, int $timestamp, string $method, string $path_with_query, string $body ): array {
		return array(
			'X-PTS-Timestamp' => (string) $timestamp,
			'X-PTS-Signature' => self::signature( $security_key, $timestamp, $method, $path_with_query, $body ),
		);
	}
}
