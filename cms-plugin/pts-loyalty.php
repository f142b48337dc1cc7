<?php
/**
 * Plugin Name:       pts Loyalty
 * Description:       Daily check-in, streaks, milestones, perks, balance and leaderboard of a pts loyalty program for a site's users.
 * Version:           0.1.0
 * Requires at least: 6.1
 * Requires PHP:      8.1
 * Author:            pts
 * License:           GPL-2.0-or-later
 * Text Domain:       pts-loyalty
 *
 * @package PtsLoyalty
 */

defined( 'ABSPATH' ) || exit;

define( 'PTS_LOYALTY_VERSION', '0.1.0' );
define( 'PTS_LOYALTY_FILE', __FILE__ );
define( 'PTS_LOYALTY_DIR', __DIR__ );

require_once __DIR__ . '/includes/class-pts-signer.php';
require_once __DIR__ . '/includes/class-pts-settings.php';
require_once __DIR__ . '/includes/class-pts-debug-log.php';
require_once __DIR__ . '/includes/class-pts-core-client.php';
require_once __DIR__ . '/includes/class-pts-rest-controller.php';
require_once __DIR__ . '/includes/class-pts-blocks.php';
require_once __DIR__ . '/includes/class-pts-site-events.php';
require_once __DIR__ . '/includes/class-pts-money.php';
require_once __DIR__ . '/includes/class-pts-outbox.php';
require_once __DIR__ . '/includes/class-pts-order-feed.php';
require_once __DIR__ . '/includes/class-pts-settings-page.php';

/** One client, shared by every part that talks to core-api (settings are read per call, so changes apply at once). */
function pts_loyalty_client(): Pts_Core_Client {
	static $client = null;
	if ( null === $client ) {
		$client = new Pts_Core_Client( new Pts_Settings() );
	}
	return $client;
}

register_activation_hook( __FILE__, array( 'Pts_Outbox', 'ensure_schema' ) );
register_deactivation_hook(
	__FILE__,
	static function () {
		// Rows stay queued; they are sent again once the plugin is active.
		wp_clear_scheduled_hook( Pts_Outbox::CRON_HOOK );
		wp_clear_scheduled_hook( Pts_Outbox::CRON_HOOK, array( 'prompt' ) );
	}
);

add_action(
	'plugins_loaded',
	static function () {
		$settings = new Pts_Settings();
		( new Pts_Rest_Controller( pts_loyalty_client() ) )->register();
		( new Pts_Blocks() )->register();
		( new Pts_Site_Events( $settings, pts_loyalty_client() ) )->register();
		$outbox = new Pts_Outbox( $settings, pts_loyalty_client() );
		$outbox->register();
		( new Pts_Order_Feed( $settings, $outbox ) )->register();
		if ( is_admin() ) {
			( new Pts_Settings_Page( $settings, pts_loyalty_client() ) )->register();
		}
	}
);
