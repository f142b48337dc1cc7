<?php
/**
 * Loads the test WordPress the vitest harness installed (env PTS_WP_ROOT), with the plugin active and
 * configured against a running core-api. Run through cms-plugin/tests/plugin.test.ts, not by hand.
 *
 * @package PtsLoyaltyTests
 */

$pts_wp_root = getenv( 'PTS_WP_ROOT' );
if ( ! $pts_wp_root || ! is_file( $pts_wp_root . '/wp-load.php' ) ) {
	fwrite( STDERR, "PTS_WP_ROOT must point at an installed WordPress (run the tests with vitest).\n" );
	exit( 1 );
}
require $pts_wp_root . '/wp-load.php';
require_once ABSPATH . 'wp-admin/includes/plugin.php';
require_once ABSPATH . 'wp-admin/includes/template.php'; // submit_button() and friends, as on an admin page.
require_once __DIR__ . '/class-pts-test-case.php';
