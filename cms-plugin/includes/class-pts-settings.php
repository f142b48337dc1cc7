<?php
/**
 * The plugin's settings: one option holding the core-api URL, brand id, security key, which site actions
 * earn events, the WooCommerce order feed (on/off, subtotal or total), and the debug toggle.
 *
 * @package PtsLoyalty
 */

defined( 'ABSPATH' ) || exit;

final class Pts_Settings {
	public const OPTION = 'pts_loyalty_settings';

	/** Site actions that can earn events, with the core-api event type each sends. */
	public const SITE_EVENTS = array(
		'user_register'    => 'account_creation',
		'comment_approved' => 'comment_approved',
		'post_published'   => 'post_published',
		'wc_order_paid'    => 'order_paid',
	);

	/** @return array<string,mixed> */
	public static function defaults(): array {
		return array(
			'api_url'        => '',
			'brand_id'       => '',
			'security_key'   => '',
			'events'         => array(
				'user_register'    => false,
				'comment_approved' => false,
				'post_published'   => false,
				'wc_order_paid'    => false,
			),
			// The WooCommerce order feed (Pts_Order_Feed): completed orders as purchases, refunds as reversals.
			'wc_orders'      => false,
			'wc_order_value' => 'subtotal',
			'debug_log'      => false,
		);
	}

	/** @return array<string,mixed> */
	public function all(): array {
		$stored = get_option( self::OPTION, array() );
		$stored = is_array( $stored ) ? $stored : array();
		$merged = array_merge( self::defaults(), $stored );
		$merged['events'] = array_merge( self::defaults()['events'], is_array( $merged['events'] ) ? $merged['events'] : array() );
		return $merged;
	}

	/** @return mixed */
	public function get( string $key ) {
		return $this->all()[ $key ] ?? null;
	}

	/** Whether a site action (a key of SITE_EVENTS) earns events. */
	public function earns( string $site_event ): bool {
		return ! empty( $this->all()['events'][ $site_event ] );
	}

	/** URL, brand and key are all set. */
	public function is_configured(): bool {
		$all = $this->all();
		return '' !== $all['api_url'] && '' !== $all['brand_id'] && '' !== $all['security_key'];
	}

	/**
	 * Validates and stores settings from the settings form. An empty security key keeps the stored one (the
	 * key is never printed back into the page, so the form cannot resend it).
	 *
	 * @param array<string,mixed> $input Raw form values (unslashed).
	 * @return string[] What is wrong, one message per problem; empty when saved.
	 */
	public function save( array $input ): array {
		$current = $this->all();
		$errors  = array();

		$url = trim( (string) ( $input['api_url'] ?? '' ) );
		if ( '' !== $url ) {
			$parts = wp_parse_url( $url );
			if ( ! is_array( $parts ) || ! in_array( $parts['scheme'] ?? '', array( 'http', 'https' ), true ) || empty( $parts['host'] ) ) {
				$errors[] = __( 'The core-api URL must be an http(s) URL such as https://api.example.com.', 'pts-loyalty' );
			}
			$url = untrailingslashit( $url );
		}

		$brand = strtolower( trim( (string) ( $input['brand_id'] ?? '' ) ) );
		if ( '' !== $brand && ! preg_match( '/^0x[0-9a-f]{40}$/', $brand ) ) {
			$errors[] = __( 'The brand id is the brand address: 0x followed by 40 hexadecimal characters.', 'pts-loyalty' );
		}

		$key = trim( (string) ( $input['security_key'] ?? '' ) );
		if ( '' === $key ) {
			$key = (string) $current['security_key'];
		} elseif ( strlen( $key ) < 16 || preg_match( '/\s/', $key ) ) {
			$errors[] = __( 'The security key looks wrong: paste the whole key shown when the brand was created.', 'pts-loyalty' );
		}

		$value_source = (string) ( $input['wc_order_value'] ?? 'subtotal' );
		if ( ! in_array( $value_source, Pts_Order_Feed::VALUE_SOURCES, true ) ) {
			$errors[] = __( 'The order value sent must be "subtotal" (before shipping and taxes) or "total".', 'pts-loyalty' );
		}

		if ( $errors ) {
			return $errors;
		}

		$events = array();
		foreach ( array_keys( self::SITE_EVENTS ) as $site_event ) {
			$events[ $site_event ] = ! empty( $input['events'][ $site_event ] );
		}
		update_option(
			self::OPTION,
			array(
				'api_url'        => $url,
				'brand_id'       => $brand,
				'security_key'   => $key,
				'events'         => $events,
				'wc_orders'      => ! empty( $input['wc_orders'] ),
				'wc_order_value' => $value_source,
				'debug_log'      => ! empty( $input['debug_log'] ),
			),
			false
		);
		return array();
	}
}
