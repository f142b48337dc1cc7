<?php
/**
 * Exact money for the order feed: amounts are integers of the currency's minor units, never floats, the way
 * core-api keeps them (docs/shop-program.md, "Values are exact"). The exponents mirror CURRENCY_EXPONENTS in
 * shared/src/schemas/money.ts; a currency core-api does not know keeps 2 decimals here and is refused there.
 *
 * @package PtsLoyalty
 */

defined( 'ABSPATH' ) || exit;

final class Pts_Money {
	private const EXPONENTS = array(
		'BHD' => 3,
		'ISK' => 0,
		'JOD' => 3,
		'JPY' => 0,
		'KRW' => 0,
		'KWD' => 3,
		'OMR' => 3,
		'TND' => 3,
		'VND' => 0,
	);

	/** Decimal places of a currency (ISO 4217 code). */
	public static function exponent( string $currency ): int {
		return self::EXPONENTS[ strtoupper( $currency ) ] ?? 2;
	}

	/**
	 * An amount as WooCommerce gives it (a decimal string such as "19.90", or a float) in minor units, rounded
	 * half up to the currency's decimals. Null when it is not a non-negative number.
	 *
	 * @param string|int|float $amount
	 */
	public static function to_minor( $amount, string $currency ): ?int {
		$decimals = self::exponent( $currency );
		if ( is_float( $amount ) ) {
			// A float from WooCommerce already holds a rounded price: format it, then parse the digits exactly.
			$amount = number_format( $amount, $decimals + 1, '.', '' );
		}
		$text = trim( (string) $amount );
		if ( ! preg_match( '/^(\d{1,15})(?:\.(\d*))?$/', $text, $parts ) ) {
			return null;
		}
		$fraction = str_pad( $parts[2] ?? '', $decimals + 1, '0' );
		$minor    = (int) $parts[1];
		for ( $i = 0; $i < $decimals; $i++ ) {
			$minor = $minor * 10 + (int) $fraction[ $i ];
		}
		return (int) $fraction[ $decimals ] >= 5 ? $minor + 1 : $minor;
	}

	/** Minor units as core-api's decimal string: 1990 EUR → "19.90", 500 JPY → "500". */
	public static function from_minor( int $minor, string $currency ): string {
		$decimals = self::exponent( $currency );
		if ( 0 === $decimals ) {
			return (string) $minor;
		}
		$digits = str_pad( (string) $minor, $decimals + 1, '0', STR_PAD_LEFT );
		return substr( $digits, 0, -$decimals ) . '.' . substr( $digits, -$decimals );
	}

	/** floor(a × b / c) for non-negative integers, exact even where a × b would overflow a PHP int. */
	public static function mul_div_floor( int $a, int $b, int $c ): int {
		$quotient  = intdiv( $a, $c ) * $b;
		$remainder = $a % $c;
		// floor(remainder × b / c) by binary long multiplication: every partial stays below 2c.
		$high = 0;
		$low  = 0;
		for ( $bit = 62; $bit >= 0; $bit-- ) {
			$high *= 2;
			$low  *= 2;
			if ( $low >= $c ) {
				$low -= $c;
				++$high;
			}
			if ( ( $b >> $bit ) & 1 ) {
				$low += $remainder;
				if ( $low >= $c ) {
					$low -= $c;
					++$high;
				}
			}
		}
		return $quotient + $high;
	}
}
