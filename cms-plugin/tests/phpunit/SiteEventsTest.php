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
}
