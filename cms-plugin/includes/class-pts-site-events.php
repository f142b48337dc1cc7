<?php
/**
 * Site actions that earn events (each switched on in the settings): user registration, a comment approved,
 * a post published, a WooCommerce order paid (never merely created). Each is sent once, signed, to
 * core-api's `POST /pts-api/manual-event`; an object already rewarded is marked so a repeated hook (an order
 * set to processing then completed, a post unpublished and published again) sends nothing.
 *
 * @package PtsLoyalty
 */

defined( 'ABSPATH' ) || exit;

final class Pts_Site_Events {
	private const MARKER = '_pts_loyalty_rewarded';

	private Pts_Settings $settings;
	private Pts_Core_Client $client;

	public function __construct( Pts_Settings $settings, Pts_Core_Client $client ) {
		$this->settings = $settings;
		$this->client   = $client;
	}

	public function register(): void {
		add_action( 'user_register', array( $this, 'on_user_register' ) );
		add_action( 'wp_insert_comment', array( $this, 'on_comment_inserted' ), 10, 2 );
		add_action( 'transition_comment_status', array( $this, 'on_comment_status' ), 10, 3 );
		add_action( 'transition_post_status', array( $this, 'on_post_status' ), 10, 3 );
		// WooCommerce: paid means payment complete, or an order that reached processing/completed (manual payments).
		add_action( 'woocommerce_payment_complete', array( $this, 'on_order_paid' ) );
		add_action( 'woocommerce_order_status_processing', array( $this, 'on_order_paid' ) );
		add_action( 'woocommerce_order_status_completed', array( $this, 'on_order_paid' ) );
	}

	public function on_user_register( int $user_id ): void {
		$user = get_userdata( $user_id );
		if ( $user && $this->settings->earns( 'user_register' ) ) {
			$this->send( 'user_register', (string) $user->user_email, array( 'idempotencyKey' => 'wp_user_' . $user_id ) );
		}
	}

	/** @param WP_Comment $comment */
	public function on_comment_inserted( int $comment_id, $comment ): void {
		if ( '1' === (string) $comment->comment_approved ) {
			$this->reward_comment( $comment );
		}
	}

	/** @param WP_Comment $comment */
	public function on_comment_status( string $new_status, string $old_status, $comment ): void {
		if ( 'approved' === $new_status && 'approved' !== $old_status ) {
			$this->reward_comment( $comment );
		}
	}

	/** @param WP_Post $post */
	public function on_post_status( string $new_status, string $old_status, $post ): void {
		if ( 'publish' !== $new_status || 'publish' === $old_status || 'post' !== $post->post_type || ! $this->settings->earns( 'post_published' ) ) {
			return;
		}
		$author = get_userdata( (int) $post->post_author );
		if ( ! $author || ! add_post_meta( $post->ID, self::MARKER, '1', true ) ) {
			return;
		}
		$this->send( 'post_published', (string) $author->user_email, array( 'idempotencyKey' => 'wp_post_' . $post->ID ), fn() => delete_post_meta( $post->ID, self::MARKER ) );
	}

	/** @param int|object $order_id */
	public function on_order_paid( $order_id ): void {
		if ( ! $this->settings->earns( 'wc_order_paid' ) || ! function_exists( 'wc_get_order' ) ) {
			return;
		}
		$order = wc_get_order( $order_id );
		if ( ! $order || ! $order->is_paid() || $order->get_meta( self::MARKER ) ) {
			return;
		}
		$order->update_meta_data( self::MARKER, '1' );
		$order->save_meta_data();
		$id = (int) $order->get_id();
		$this->send(
			'wc_order_paid',
			(string) $order->get_billing_email(),
			array(
				'idempotencyKey' => 'wc_order_' . $id,
				'orderId'        => (string) $id,
				'orderTotal'     => (string) $order->get_total(),
				'currency'       => (string) $order->get_currency(),
			),
			static function () use ( $order ) {
				$order->delete_meta_data( self::MARKER );
				$order->save_meta_data();
			}
		);
	}

	/** @param WP_Comment $comment */
	private function reward_comment( $comment ): void {
		if ( ! $this->settings->earns( 'comment_approved' ) || '' === (string) $comment->comment_author_email ) {
			return;
		}
		$id = (int) $comment->comment_ID;
		if ( ! add_comment_meta( $id, self::MARKER, '1', true ) ) {
			return;
		}
		$this->send( 'comment_approved', (string) $comment->comment_author_email, array( 'idempotencyKey' => 'wp_comment_' . $id ), fn() => delete_comment_meta( $id, self::MARKER ) );
	}

	/**
	 * Sends the event; on a failure that did not reach core-api the marker is removed so a later hook may retry.
	 *
	 * @param array<string,string> $metadata
	 */
	private function send( string $site_event, string $email, array $metadata, ?callable $on_unsent = null ): void {
		if ( ! is_email( $email ) || ! $this->settings->is_configured() ) {
			return;
		}
		$result = $this->client->post(
			'/pts-api/manual-event',
			array(
				'brandId'   => $this->client->brand_id(),
				'eventType' => Pts_Settings::SITE_EVENTS[ $site_event ],
				'userEmail' => strtolower( $email ),
				'metadata'  => $metadata + array(
					'platform' => Pts_Rest_Controller::PLATFORM,
					'site'     => (string) wp_parse_url( home_url(), PHP_URL_HOST ),
				),
			)
		);
		if ( is_wp_error( $result ) && $on_unsent ) {
			$on_unsent();
		}
		if ( ! is_wp_error( $result ) && $result['status'] >= 300 ) {
			Pts_Debug_Log::write( $this->settings, sprintf( 'event %s refused: %d %s', $site_event, $result['status'], (string) ( $result['body']['code'] ?? '' ) ) );
		}
	}
}
