<?php
/**
 * The WooCommerce order feed (settings: "WooCommerce orders"): a completed order is a `purchase` of the order's
 * billing e-mail with its value (subtotal or total, a setting) and a refund takes its share back through
 * core-api's reversals. Both are queued in the outbox (Pts_Outbox) in the hook and sent by wp-cron.
 *
 * - `woocommerce_order_status_completed` → `POST /pts-api/manual-event`, eventType `purchase`,
 *   `externalId` `<site host>:wc_order_<id>`, `value` {amount, currency}.
 * - `woocommerce_refund_created` and `woocommerce_order_refunded` (WooCommerce fires both for one refund) →
 *   `POST /pts-api/reversals` naming that purchase, `reversalId` `<site host>:wc_refund_<id>`, `value` the
 *   refunded part of the purchase's value; the refund that completes the order's refund sends no value, so
 *   core-api takes back everything left (no rounding remainder stays).
 *
 * @package PtsLoyalty
 */

defined( 'ABSPATH' ) || exit;

final class Pts_Order_Feed {
	public const EVENT_TYPE   = 'purchase';
	public const VALUE_SOURCES = array( 'subtotal', 'total' );

	private Pts_Settings $settings;
	private Pts_Outbox $outbox;

	public function __construct( Pts_Settings $settings, Pts_Outbox $outbox ) {
		$this->settings = $settings;
		$this->outbox   = $outbox;
	}

	public function register(): void {
		add_action( 'woocommerce_order_status_completed', array( $this, 'on_order_completed' ), 10, 2 );
		add_action( 'woocommerce_refund_created', array( $this, 'on_refund_created' ), 10, 2 );
		add_action( 'woocommerce_order_refunded', array( $this, 'on_order_refunded' ), 10, 2 );
	}

	/** The externalId of an order's purchase (the same for the reversal that names it). */
	public static function order_external_id( int $order_id ): string {
		return Pts_Site_Events::external_id( self::site(), 'wc_order_' . $order_id );
	}

	public static function reversal_id( int $refund_id ): string {
		return Pts_Site_Events::external_id( self::site(), 'wc_refund_' . $refund_id );
	}

	private static function site(): string {
		return (string) wp_parse_url( home_url(), PHP_URL_HOST );
	}

	/**
	 * @param int|string $order_id
	 * @param mixed      $order WooCommerce passes the order too (3.x+); it is looked up when absent.
	 */
	public function on_order_completed( $order_id, $order = null ): void {
		if ( ! $this->settings->get( 'wc_orders' ) || ! function_exists( 'wc_get_order' ) ) {
			return;
		}
		$order = is_object( $order ) ? $order : wc_get_order( $order_id );
		if ( ! $order ) {
			return;
		}
		$id    = (int) $order->get_id();
		$email = strtolower( trim( (string) $order->get_billing_email() ) );
		if ( ! is_email( $email ) ) {
			Pts_Debug_Log::write( $this->settings, sprintf( 'order feed: order %d has no billing e-mail, not sent', $id ) );
			return;
		}
		$currency = strtoupper( (string) $order->get_currency() );
		$source   = $this->value_source();
		$minor    = Pts_Money::to_minor( 'total' === $source ? $order->get_total() : $order->get_subtotal(), $currency );
		if ( null === $minor ) {
			Pts_Debug_Log::write( $this->settings, sprintf( 'order feed: order %d has no readable %s, not sent', $id, $source ) );
			return;
		}
		$this->outbox->enqueue(
			'purchase:' . $id,
			'purchase',
			$id,
			'/pts-api/manual-event',
			array(
				'eventType'  => self::EVENT_TYPE,
				'userEmail'  => $email,
				'externalId' => self::order_external_id( $id ),
				'value'      => array(
					'amount'   => Pts_Money::from_minor( $minor, $currency ),
					'currency' => $currency,
				),
				'metadata'   => array(
					'platform'    => 'woocommerce',
					'site'        => self::site(),
					'orderId'     => (string) $id,
					'valueSource' => $source,
				),
			)
		);
	}

	/**
	 * @param int|string $refund_id
	 * @param mixed      $args wc_create_refund()'s arguments (unused: the refund is read back).
	 */
	public function on_refund_created( $refund_id, $args = null ): void {
		$this->queue_refund( (int) $refund_id );
	}

	/**
	 * @param int|string $order_id
	 * @param int|string $refund_id
	 */
	public function on_order_refunded( $order_id, $refund_id = 0 ): void {
		$this->queue_refund( (int) $refund_id );
	}

	private function queue_refund( int $refund_id ): void {
		if ( ! $this->settings->get( 'wc_orders' ) || ! function_exists( 'wc_get_order' ) || $refund_id <= 0 ) {
			return;
		}
		$refund = wc_get_order( $refund_id );
		$order  = $refund ? wc_get_order( (int) $refund->get_parent_id() ) : false;
		if ( ! $refund || ! $order ) {
			return;
		}
		$order_id = (int) $order->get_id();
		$body     = array(
			'reversalId' => self::reversal_id( $refund_id ),
			'eventType'  => self::EVENT_TYPE,
			'externalId' => self::order_external_id( $order_id ),
		);
		$value = $this->refunded_value( $order, $refund );
		if ( false === $value ) {
			Pts_Debug_Log::write( $this->settings, sprintf( 'order feed: refund %d of order %d is worth nothing of the purchase, not sent', $refund_id, $order_id ) );
			return;
		}
		if ( null !== $value ) {
			$body['value'] = $value;
		}
		$this->outbox->enqueue( 'reversal:' . $refund_id, 'reversal', $order_id, '/pts-api/reversals', $body );
	}

	/**
	 * The refunded part of the purchase's value: the refund's amount when the purchase was the order's total;
	 * the same share of the subtotal otherwise (a refund of a tenth of the total is a tenth of the subtotal),
	 * rounded down. Null once the order is refunded in full: core-api then takes back all that is left.
	 * False when the share rounds to nothing.
	 *
	 * @param object $order
	 * @param object $refund
	 * @return array{amount:string,currency:string}|null|false
	 */
	private function refunded_value( $order, $refund ) {
		$currency = strtoupper( (string) $order->get_currency() );
		$total    = Pts_Money::to_minor( $order->get_total(), $currency ) ?? 0;
		$refunded = Pts_Money::to_minor( $order->get_total_refunded(), $currency ) ?? 0;
		$amount   = Pts_Money::to_minor( $refund->get_amount(), $currency ) ?? 0;
		if ( $total <= 0 || $refunded >= $total ) {
			return null;
		}
		$purchase = $this->purchase_value_minor( (int) $order->get_id(), $order, $currency );
		$share    = Pts_Money::mul_div_floor( min( $amount, $total ), $purchase, $total );
		if ( $share <= 0 ) {
			return false;
		}
		return array(
			'amount'   => Pts_Money::from_minor( $share, $currency ),
			'currency' => $currency,
		);
	}

	/** The value the order's purchase was sent with (its queued row), or what it would be now. @param object $order */
	private function purchase_value_minor( int $order_id, $order, string $currency ): int {
		$row = Pts_Outbox::find( 'purchase:' . $order_id );
		if ( $row ) {
			$body = json_decode( (string) $row['body'], true );
			if ( isset( $body['value']['amount'] ) ) {
				return Pts_Money::to_minor( (string) $body['value']['amount'], $currency ) ?? 0;
			}
		}
		return Pts_Money::to_minor( 'total' === $this->value_source() ? $order->get_total() : $order->get_subtotal(), $currency ) ?? 0;
	}

	private function value_source(): string {
		$source = (string) $this->settings->get( 'wc_order_value' );
		return in_array( $source, self::VALUE_SOURCES, true ) ? $source : 'subtotal';
	}
}
