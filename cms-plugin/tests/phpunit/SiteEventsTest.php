<?php
/**
 * Site actions that earn events reach core-api once, signed, only when switched on.
 *
 * @package PtsLoyaltyTests
 */

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
		// The WooCommerce stand-in (tests/support/woocommerce-stand-in.php) fires WooCommerce's hooks.
		$order = wc_create_order( array( 'billing_email' => 'gus@example.com', 'total' => '19.90' ) );
		$order->update_status( 'on-hold' );
		$this->assertSame( 0, $this->confirmed_points( 'gus@example.com' ) );

		$order->update_status( 'processing' );
		$this->assertSame( 50, $this->confirmed_points( 'gus@example.com' ) );
		$order->update_status( 'completed' );
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
