<?php
/**
 * The signature construction of docs/api/events.md (the vitest side also compares it with shared/src/signing.ts).
 *
 * @package PtsLoyaltyTests
 */

final class SignerTest extends Pts_Test_Case {
	public function test_signs_timestamp_method_path_and_raw_body(): void {
		$expected = hash_hmac( 'sha256', '1700000000.POST./services/checkin.{"a":1}', 'pts_sk_key' );
		$this->assertSame( $expected, Pts_Signer::signature( 'pts_sk_key', 1700000000, 'post', '/services/checkin', '{"a":1}' ) );
		$this->assertMatchesRegularExpression( '/^[0-9a-f]{64}$/', $expected );
	}

	public function test_headers_carry_timestamp_and_signature(): void {
		$headers = Pts_Signer::headers( 'k', 42, 'GET', '/x?y=1', '' );
		$this->assertSame( '42', $headers['X-PTS-Timestamp'] );
		$this->assertSame( hash_hmac( 'sha256', '42.GET./x?y=1.', 'k' ), $headers['X-PTS-Signature'] );
	}
}
