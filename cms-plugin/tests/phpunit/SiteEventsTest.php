<?php
/**
 * Site actions that earn events reach core-api once, signed, only when switched on.
 *
 * @package PtsLoyaltyTests
 */

/**
 * A stand-in for WooCommerce's order API (WooCommerce lives outside this repository and is not installable
 * here): the calls the plugin makes, with an order's status deciding `is_paid()` as WooCommerce does.
 */
final class Pts_Fake_Wc_Order {
	/** @var array<int,Pts_Fake_Wc_Order> */
	public static array $orders = array();
	/** @var array<string,string> */
	private array $meta = array();

	public function __construct( private int $id, public string $status, private string $email, private string $total ) {
		self::$orders[ $id ] = $this;
	}
	public function get_id(): int {
		return $this->id;
	}
	public function is_paid(): bool {
		return in_array( $this->status, array( 'processing', 'completed' ), true );
	}
	public function get_meta( string $key ): string {
		return $this->meta[ $key ] ?? '';
	}
	public function update_meta_data( string $key, string $value ): void {
		$this->meta[ $key ] = $value;
	}
	public function delete_meta_data( string $key ): void {
		unset( $this->meta[ $key ] );
	}
	public function save_meta_data(): void {
	}
	public function get_billing_email(): string {
		return $this->email;
	}
	public function get_total(): string {
		return $this->total;
	}
	public function get_currency(): string {
		return 'EUR';
	}
}

if ( ! function_exists( 'wc_get_order' ) ) {
	/** @param int|object $order */
	function wc_get_order( $order ) {
		return Pts_Fake_Wc_Order::$orders[ is_object( $order ) ? $order->get_id() : (int) $order ] ?? false;
	}
}

final class SiteEventsTest extends Pts_Test_Case {
	public function test_registration_earns_account_creation_only_when_switched_on(): void {
		$this->with_settings( array( 'events' => array( 'user_register' => false ) ) );
		wp_insert_user( array( 'user_login' => 'quiet', 'user_email' => 'quiet@example.com', 'user_pass' => wp_generate_password() ) );
		$this->assertSame( 0, $this->confirmed_points( 'quiet@example.com' ) );
		$this->tearDown();

		$this->with_settings( array( 'events' => array( 'user_register' => true ) ) );
		wp_insert_user( array( 'user_login' => 'newbie', 'user_email' => 'Newbie@Example.com', 'user_pass' => wp_generate_password() ) );
		$this->assertSame( 100, $this->confirmed_points( 'newbie@example.com' ) );
	}

	public function test_an_approved_comment_earns_once_even_when_approved_again(): void {
		$this->with_settings( array( 'events' => array( 'comment_approved' => true ) ) );
		$post_id    = (int) get_posts( array( 'post_type' => 'page', 'numberposts' => 1, 'fields' => 'ids' ) )[0];
		$comment_id = wp_insert_comment(
			array(
				'comment_post_ID'      => $post_id,
				'comment_author'       => 'Erin',
				'comment_author_email' => 'erin@example.com',
				'comment_content'      => 'Nice shop',
				'comment_approved'     => 0,
			)
		);
		$this->assertSame( 0, $this->confirmed_points( 'erin@example.com' ) );
		wp_set_comment_status( $comment_id, 'approve' );
		$this->assertSame( 20, $this->confirmed_points( 'erin@example.com' ) );
		wp_set_comment_status( $comment_id, 'hold' );
		wp_set_comment_status( $comment_id, 'approve' );
		$this->assertSame( 20, $this->confirmed_points( 'erin@example.com' ) );
	}

	public function test_a_lost_marker_still_pays_once_core_api_keeps_the_external_id(): void {
		$this->with_settings( array( 'events' => array( 'comment_approved' => true ) ) );
		$post_id    = (int) get_posts( array( 'post_type' => 'page', 'numberposts' => 1, 'fields' => 'ids' ) )[0];
		$comment_id = wp_insert_comment(
			array(
				'comment_post_ID'      => $post_id,
				'comment_author'       => 'Faye',
				'comment_author_email' => 'faye@example.com',
				'comment_content'      => 'Great',
				'comment_approved'     => 0,
			)
		);
		wp_set_comment_status( $comment_id, 'approve' );
		$this->assertSame( 20, $this->confirmed_points( 'faye@example.com' ) );
		// The site's own marker is gone (a restored backup, a cleared meta table): the hook sends again, and
		// core-api answers with the first event instead of paying twice.
		delete_comment_meta( $comment_id, '_pts_loyalty_rewarded' );
		wp_set_comment_status( $comment_id, 'hold' );
		wp_set_comment_status( $comment_id, 'approve' );
		$this->assertSame( 20, $this->confirmed_points( 'faye@example.com' ) );
	}

	public function test_external_ids_name_the_site_and_stay_within_128_characters(): void {
		$this->assertSame( 'shop.example:wc_order_42', Pts_Site_Events::external_id( 'shop.example', 'wc_order_42' ) );
		$long = Pts_Site_Events::external_id( str_repeat( 'a', 200 ) . '.example', 'wc_order_42' );
		$this->assertLessThanOrEqual( 128, strlen( $long ) );
		$this->assertStringStartsWith( 'sha256:', $long );
		$this->assertSame( $long, Pts_Site_Events::external_id( str_repeat( 'a', 200 ) . '.example', 'wc_order_42' ) );
	}

	public function test_an_order_earns_when_paid_never_when_merely_created_and_once_across_statuses(): void {
		$this->with_settings( array( 'events' => array( 'wc_order_paid' => true ) ) );
		$order = new Pts_Fake_Wc_Order( 4242, 'pending', 'gus@example.com', '19.90' );
		do_action( 'woocommerce_new_order', 4242 );
		do_action( 'woocommerce_order_status_pending', 4242 );
		$this->assertSame( 0, $this->confirmed_points( 'gus@example.com' ) );

		$order->status = 'processing';
		do_action( 'woocommerce_payment_complete', 4242 );
		do_action( 'woocommerce_order_status_processing', 4242 );
		$this->assertSame( 50, $this->confirmed_points( 'gus@example.com' ) );
		$order->status = 'completed';
		do_action( 'woocommerce_order_status_completed', 4242 );
		$this->assertSame( 50, $this->confirmed_points( 'gus@example.com' ) );
	}

	public function test_a_published_post_earns_its_author_once(): void {
		$this->with_settings( array( 'events' => array( 'post_published' => true ) ) );
		$author  = wp_insert_user( array( 'user_login' => 'hana', 'user_email' => 'hana@example.com', 'user_pass' => wp_generate_password() ) );
		$post_id = wp_insert_post( array( 'post_title' => 'Draft', 'post_status' => 'draft', 'post_author' => $author, 'post_type' => 'post' ) );
		$this->assertSame( 0, $this->confirmed_points( 'hana@example.com' ) );
		wp_publish_post( $post_id );
		$this->assertSame( 30, $this->confirmed_points( 'hana@example.com' ) );
		wp_update_post( array( 'ID' => $post_id, 'post_status' => 'draft' ) );
		wp_publish_post( $post_id );
		$this->assertSame( 30, $this->confirmed_points( 'hana@example.com' ) );
	}
}
