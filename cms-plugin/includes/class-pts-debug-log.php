<?php
/**
 * Optional debug log (settings: "debug log"): one line per core-api call through error_log(). Never logs the
 * security key, signatures or request bodies; only method, path, status and duration.
 *
 * @package PtsLoyalty
 */

defined( 'ABSPATH' ) || exit;

final class Pts_Debug_Log {
	public static function write( Pts_Settings $settings, string $message ): void {
		if ( ! $settings->get( 'debug_log' ) ) {
			return;
		}
		// phpcs:ignore WordPress.PHP.DevelopmentFunctions.error_log_error_log -- the toggle is explicit.
		error_log( '[pts-loyalty] ' . $message );
	}
}
