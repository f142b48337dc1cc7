<?php
/**
 * Removes everything the plugin stored: its settings (the security key among them) and its per-object markers.
 *
 * @package PtsLoyalty
 */

defined( 'WP_UNINSTALL_PLUGIN' ) || exit;

require_once __DIR__ . '/includes/class-pts-settings.php';
require_once __DIR__ . '/includes/class-pts-outbox.php';

delete_option( Pts_Settings::OPTION );
Pts_Outbox::drop(); // the order feed's queue, its schema marker and its cron runs
delete_metadata( 'post', 0, '_pts_loyalty_rewarded', '', true );
delete_metadata( 'comment', 0, '_pts_loyalty_rewarded', '', true );
