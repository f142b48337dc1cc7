<?php
/**
 * A stand-in for WooCommerce (which lives outside this repository and cannot be installed here), loaded as a
 * must-use plugin by the tests that ask for it: the order API the plugin calls, stored the way WooCommerce
 * stores orders without HPOS (a `shop_order` post per order, a `shop_order_refund` post per refund, the
 * order's fields in post meta), firing WooCommerce's hooks with WooCommerce's arguments:
 *
 * - WC_Order::update_status() → `woocommerce_order_status_{to}` ($id, $order, $transition),
 *   `woocommerce_order_status_{from}_to_{to}` ($id, $order), `woocommerce_order_status_changed`
 *   ($id, $from, $to, $order), as WC_Order::status_transition() does;
 * - wc_create_refund() → `woocommerce_order_partially_refunded` / `woocommerce_order_fully_refunded`
 *   ($order_id, $refund_id) (the order then goes to `refunded`), `woocommerce_refund_created`
 *   ($refund_id, $args) and `woocommerce_order_refunded` ($order_id, $refund_id), in WooCommerce's order.
 *
 * Amounts are decimal strings as WooCommerce stores them (`_order_total`, `_refund_amount`).
 *
 * @package PtsLoyaltyTests
 */

defined( 'ABSPATH' ) || exit;

if ( class_exists( 'WC_Order' ) ) {
	return;
}

add_action(
	'init',
	static function () {
		register_post_type( 'shop_order', array( 'public' => false ) );
		register_post_type( 'shop_order_refund', array( 'public' => false ) );
		foreach ( array( 'pending', 'processing', 'on-hold', 'completed', 'cancelled', 'refunded', 'failed' ) as $status ) {
			register_post_status(
				'wc-' . $status,
				array(
					'public'              => false,
					'exclude_from_search' => false,
					'internal'            => false,
				)
			);
		}
	}
);

/** What WC_Order and WC_Order_Refund share: an id, post meta, a parent. */
abstract class WC_Abstract_Order {
	protected int $id;

	public function __construct( int $id ) {
		$this->id = $id;
	}
	public function get_id(): int {
		return $this->id;
	}
	public function get_parent_id(): int {
		return (int) get_post_field( 'post_parent', $this->id );
	}
	/** @return mixed */
	public function get_meta( string $key, bool $single = true ) {
		return get_post_meta( $this->id, $key, $single );
	}
	/** @param mixed $value */
	public function update_meta_data( string $key, $value ): void {
		update_post_meta( $this->id, $key, $value );
	}
	public function delete_meta_data( string $key ): void {
		delete_post_meta( $this->id, $key );
	}
	public function save_meta_data(): void {
	}
	public function save(): int {
		return $this->id;
	}
	public function get_currency(): string {
		return (string) get_post_meta( $this->id, '_order_currency', true );
	}
}

class WC_Order extends WC_Abstract_Order {
	public function get_status(): string {
		return substr( (string) get_post_status( $this->id ), 3 );
	}
	public function is_paid(): bool {
		return in_array( $this->get_status(), array( 'processing', 'completed' ), true );
	}
	public function get_billing_email(): string {
		return (string) get_post_meta( $this->id, '_billing_email', true );
	}
	public function get_total(): string {
		return (string) get_post_meta( $this->id, '_order_total', true );
	}
	/** Line items before discounts, shipping and taxes (WooCommerce sums its items; the stand-in stores it). */
	public function get_subtotal(): string {
		return (string) get_post_meta( $this->id, '_order_subtotal', true );
	}
	/** @return WC_Order_Refund[] */
	public function get_refunds(): array {
		$ids = get_posts(
			array(
				'post_type'   => 'shop_order_refund',
				'post_parent' => $this->id,
				'post_status' => 'any',
				'numberposts' => -1,
				'fields'      => 'ids',
				'orderby'     => 'ID',
				'order'       => 'ASC',
			)
		);
		return array_map( static fn( $id ) => new WC_Order_Refund( (int) $id ), $ids );
	}
	/** The sum of the refunds, as a decimal string with the currency's decimals. */
	public function get_total_refunded(): string {
		$cents = 0;
		foreach ( $this->get_refunds() as $refund ) {
			$cents += (int) round( (float) $refund->get_amount() * 100 );
		}
		return number_format( $cents / 100, 2, '.', '' );
	}
	public function get_remaining_refund_amount(): string {
		return number_format( ( (int) round( (float) $this->get_total() * 100 ) - (int) round( (float) $this->get_total_refunded() * 100 ) ) / 100, 2, '.', '' );
	}
	/** Sets the status and fires WooCommerce's transition hooks (nothing when the status is unchanged). */
	public function update_status( string $to, string $note = '' ): bool {
		$from = $this->get_status();
		if ( $from === $to ) {
			return false;
		}
		wp_update_post(
			array(
				'ID'          => $this->id,
				'post_status' => 'wc-' . $to,
			)
		);
		$transition = array(
			'from'   => $from,
			'to'     => $to,
			'note'   => $note,
			'manual' => false,
		);
		do_action( 'woocommerce_order_status_' . $to, $this->id, $this, $transition );
		do_action( 'woocommerce_order_status_' . $from . '_to_' . $to, $this->id, $this );
		do_action( 'woocommerce_order_status_changed', $this->id, $from, $to, $this );
		if ( in_array( $to, array( 'processing', 'completed' ), true ) && ! in_array( $from, array( 'processing', 'completed' ), true ) ) {
			do_action( 'woocommerce_payment_complete', $this->id );
		}
		return true;
	}
}

class WC_Order_Refund extends WC_Abstract_Order {
	public function get_amount(): string {
		return (string) get_post_meta( $this->id, '_refund_amount', true );
	}
	public function get_reason(): string {
		return (string) get_post_meta( $this->id, '_refund_reason', true );
	}
}

/**
 * An order or a refund by id (or the object itself), false when there is none.
 *
 * @param mixed $order
 * @return WC_Order|WC_Order_Refund|false
 */
function wc_get_order( $order = false ) {
	$id = is_object( $order ) && method_exists( $order, 'get_id' ) ? (int) $order->get_id() : (int) $order;
	switch ( $id > 0 ? get_post_type( $id ) : false ) {
		case 'shop_order':
			return new WC_Order( $id );
		case 'shop_order_refund':
			return new WC_Order_Refund( $id );
	}
	return false;
}

/**
 * A new order, `pending` unless `status` says otherwise (as the checkout makes one; no status hook fires).
 * Stand-in arguments: billing_email, total, subtotal (defaults to total), currency (default USD), status.
 *
 * @param array<string,mixed> $args
 */
function wc_create_order( array $args = array() ): WC_Order {
	$id = wp_insert_post(
		array(
			'post_type'   => 'shop_order',
			'post_status' => 'wc-' . ( $args['status'] ?? 'pending' ),
			'post_title'  => 'Order',
		),
		true
	);
	if ( is_wp_error( $id ) ) {
		throw new RuntimeException( $id->get_error_message() );
	}
	update_post_meta( $id, '_billing_email', (string) ( $args['billing_email'] ?? '' ) );
	update_post_meta( $id, '_order_total', (string) ( $args['total'] ?? '0.00' ) );
	update_post_meta( $id, '_order_subtotal', (string) ( $args['subtotal'] ?? $args['total'] ?? '0.00' ) );
	update_post_meta( $id, '_order_currency', (string) ( $args['currency'] ?? 'USD' ) );
	do_action( 'woocommerce_new_order', $id, new WC_Order( $id ) );
	return new WC_Order( $id );
}

/**
 * A refund of `amount` (a decimal string) of order `order_id`, as WooCommerce's wc_create_refund() makes it:
 * refused above what is left to refund; the hooks in WooCommerce's order.
 *
 * @param array<string,mixed> $args
 * @return WC_Order_Refund|WP_Error
 */
function wc_create_refund( array $args ) {
	$order = wc_get_order( (int) ( $args['order_id'] ?? 0 ) );
	if ( ! $order instanceof WC_Order ) {
		return new WP_Error( 'error', 'Invalid order ID.' );
	}
	$amount    = (string) ( $args['amount'] ?? '0' );
	$remaining = $order->get_remaining_refund_amount();
	if ( (float) $amount <= 0 || round( (float) $amount * 100 ) > round( (float) $remaining * 100 ) ) {
		return new WP_Error( 'error', 'Invalid refund amount.' );
	}
	$id = wp_insert_post(
		array(
			'post_type'   => 'shop_order_refund',
			'post_status' => 'wc-completed',
			'post_parent' => $order->get_id(),
			'post_title'  => 'Refund',
		),
		true
	);
	update_post_meta( $id, '_refund_amount', $amount );
	update_post_meta( $id, '_refund_reason', (string) ( $args['reason'] ?? '' ) );
	update_post_meta( $id, '_order_currency', $order->get_currency() );
	$refund = new WC_Order_Refund( $id );
	if ( (float) $order->get_remaining_refund_amount() > 0 ) {
		do_action( 'woocommerce_order_partially_refunded', $order->get_id(), $id );
	} else {
		do_action( 'woocommerce_order_fully_refunded', $order->get_id(), $id );
		$order->update_status( 'refunded' );
	}
	do_action( 'woocommerce_refund_created', $id, $args );
	do_action( 'woocommerce_order_refunded', $order->get_id(), $id );
	return $refund;
}
