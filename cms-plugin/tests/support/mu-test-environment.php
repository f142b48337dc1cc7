<?php
/**
 * Test environment only (copied into wp-content/mu-plugins by the tests): no mail, no avatars (no external
 * requests), no update checks.
 *
 * @package PtsLoyaltyTests
 */

add_filter( 'pre_wp_mail', '__return_true' );
add_filter( 'pre_option_show_avatars', '__return_zero' );
add_filter( 'automatic_updater_disabled', '__return_true' );
add_filter( 'pre_site_transient_update_core', '__return_null' );
add_filter( 'pre_site_transient_update_plugins', '__return_null' );
add_filter( 'pre_site_transient_update_themes', '__return_null' );
