<?php
/**
 * The order feed's outbox: each order or refund to send is a row in `{prefix}pts_loyalty_outbox`, written in
 * the hook and sent later by wp-cron, so a checkout or a refund never waits for core-api and an order is not
 * lost while core-api is down. A row's `job_key` is unique (the same refund reported by two hooks, or an order
 * completed twice, is queued once), and what it sends carries core-api's idempotency ids (`externalId`,
 * `reversalId`), so a row sent twice (a crash after sending, two cron runs) still counts once.
 *
 * @package PtsLoyalty
 */

defined( 'ABSPATH' ) || exit;

final class Pts_Outbox {
	public const CRON_HOOK       = 'pts_loyalty_send_outbox';
	public const CRON_SCHEDULE   = 'pts_loyalty_five_minutes';
	private const SCHEMA_VERSION = '1';
	private const SCHEMA_OPTION  = 'pts_loyalty_outbox_schema';
	/** Rows sent per cron run: one run stays well inside PHP's time limit even when core-api is slow. */
	private const BATCH = 20;
	/** Seconds a run holds a row it is sending, so two runs at once never send the same row together. */
	private const LEASE_SECONDS = 120;
	/** Retry delays double from one minute up to six hours; a row is retried until it is sent or refused. */
	private const FIRST_DELAY = 60;
	private const MAX_DELAY   = 21600;

	/** pending: to send · sent: core-api accepted it · refused: core-api said no for good (4xx) · skipped: nothing to send. */
	public const STATUSES = array( 'pending', 'sent', 'refused', 'skipped' );

	private Pts_Settings $settings;
	private Pts_Core_Client $client;

	public function __construct( Pts_Settings $settings, Pts_Core_Client $client ) {
		$this->settings = $settings;
		$this->client   = $client;
	}

	public static function table(): string {
		global $wpdb;
		return $wpdb->prefix . 'pts_loyalty_outbox';
	}

	public function register(): void {
		add_filter( 'cron_schedules', array( self::class, 'add_schedule' ) );
		add_action( self::CRON_HOOK, array( $this, 'send_due' ) );
		add_action( 'init', array( self::class, 'ensure_schema' ), 1 );
		add_action( 'init', array( self::class, 'schedule' ) );
	}

	/** @param array<string,array<string,mixed>> $schedules */
	public static function add_schedule( $schedules ) {
		$schedules[ self::CRON_SCHEDULE ] = array(
			'interval' => 300,
			'display'  => __( 'Every five minutes (pts Loyalty order feed)', 'pts-loyalty' ),
		);
		return $schedules;
	}

	/** The recurring run that retries what is due. */
	public static function schedule(): void {
		if ( ! wp_next_scheduled( self::CRON_HOOK ) ) {
			wp_schedule_event( time() + 300, self::CRON_SCHEDULE, self::CRON_HOOK );
		}
	}

	/** Creates or updates the table (on activation, and once after an update of the plugin). */
	public static function ensure_schema(): void {
		if ( self::SCHEMA_VERSION === get_option( self::SCHEMA_OPTION ) ) {
			return;
		}
		global $wpdb;
		require_once ABSPATH . 'wp-admin/includes/upgrade.php';
		$table   = self::table();
		$charset = $wpdb->get_charset_collate();
		dbDelta(
			"CREATE TABLE $table (
  id bigint(20) unsigned NOT NULL AUTO_INCREMENT,
  job_key varchar(191) NOT NULL,
  kind varchar(20) NOT NULL,
  order_id bigint(20) unsigned NOT NULL DEFAULT 0,
  path varchar(100) NOT NULL,
  body longtext NOT NULL,
  status varchar(20) NOT NULL DEFAULT 'pending',
  attempts int(10) unsigned NOT NULL DEFAULT 0,
  next_attempt_at bigint(20) unsigned NOT NULL DEFAULT 0,
  locked_until bigint(20) unsigned NOT NULL DEFAULT 0,
  last_result varchar(255) NOT NULL DEFAULT '',
  created_at bigint(20) unsigned NOT NULL DEFAULT 0,
  sent_at bigint(20) unsigned NOT NULL DEFAULT 0,
  PRIMARY KEY  (id),
  UNIQUE KEY job_key (job_key),
  KEY due (status,next_attempt_at),
  KEY order_id (order_id)
) $charset;"
		);
		update_option( self::SCHEMA_OPTION, self::SCHEMA_VERSION, true );
	}

	/** Drops the table (uninstall). */
	public static function drop(): void {
		global $wpdb;
		$wpdb->query( 'DROP TABLE IF EXISTS ' . self::table() ); // phpcs:ignore WordPress.DB.PreparedSQL -- our own table name.
		delete_option( self::SCHEMA_OPTION );
		wp_clear_scheduled_hook( self::CRON_HOOK );
		wp_clear_scheduled_hook( self::CRON_HOOK, array( 'prompt' ) );
	}

	/**
	 * Queues one request (`kind` purchase or reversal) unless a row with the same key exists, and asks wp-cron
	 * to send it at once (in the background: wp-cron runs in its own request). Never calls core-api.
	 *
	 * @param array<string,mixed> $body The request body without brandId (added when sent, from the settings then).
	 * @return bool Whether a row was added (false: it was queued before).
	 */
	public function enqueue( string $job_key, string $kind, int $order_id, string $path, array $body ): bool {
		global $wpdb;
		self::ensure_schema();
		$added = $wpdb->query(
			$wpdb->prepare(
				'INSERT IGNORE INTO ' . self::table() . ' (job_key, kind, order_id, path, body, status, attempts, next_attempt_at, created_at) VALUES (%s, %s, %d, %s, %s, %s, 0, %d, %d)', // phpcs:ignore WordPress.DB.PreparedSQL
				$job_key,
				$kind,
				$order_id,
				$path,
				(string) wp_json_encode( $body ),
				'pending',
				time(),
				time()
			)
		);
		if ( 1 !== $added ) {
			Pts_Debug_Log::write( $this->settings, sprintf( 'order feed: %s already queued', $job_key ) );
			return false;
		}
		Pts_Debug_Log::write( $this->settings, sprintf( 'order feed: queued %s', $job_key ) );
		// A distinct argument, so the recurring run scheduled for the same hook does not swallow this one.
		if ( ! wp_next_scheduled( self::CRON_HOOK, array( 'prompt' ) ) ) {
			wp_schedule_single_event( time(), self::CRON_HOOK, array( 'prompt' ) );
		}
		return true;
	}

	/**
	 * A row by its key (tests, the settings page).
	 *
	 * @return array<string,mixed>|null
	 */
	public static function find( string $job_key ): ?array {
		global $wpdb;
		$row = $wpdb->get_row( $wpdb->prepare( 'SELECT * FROM ' . self::table() . ' WHERE job_key = %s', $job_key ), ARRAY_A ); // phpcs:ignore WordPress.DB.PreparedSQL
		return is_array( $row ) ? $row : null;
	}

	/** @return array<string,int> Rows per status. */
	public static function counts(): array {
		global $wpdb;
		$counts = array_fill_keys( self::STATUSES, 0 );
		foreach ( (array) $wpdb->get_results( 'SELECT status, COUNT(*) AS n FROM ' . self::table() . ' GROUP BY status', ARRAY_A ) as $row ) { // phpcs:ignore WordPress.DB.PreparedSQL
			$counts[ (string) $row['status'] ] = (int) $row['n'];
		}
		return $counts;
	}

	/**
	 * Sends every row that is due, oldest first (the cron hook). A reversal waits for its order's purchase; a row
	 * core-api could not take (down, 5xx, 429, a refused signature the admin may fix) is retried later.
	 *
	 * @param mixed $reason 'prompt' for the run an enqueue asked for (unused: every run sends what is due).
	 * @return int Rows sent.
	 */
	public function send_due( $reason = null ): int {
		global $wpdb;
		if ( ! $this->settings->is_configured() ) {
			return 0;
		}
		$now  = time();
		$rows = (array) $wpdb->get_results(
			$wpdb->prepare( 'SELECT * FROM ' . self::table() . " WHERE status = 'pending' AND next_attempt_at <= %d AND locked_until <= %d ORDER BY id LIMIT %d", $now, $now, self::BATCH ), // phpcs:ignore WordPress.DB.PreparedSQL
			ARRAY_A
		);
		$sent = 0;
		foreach ( $rows as $row ) {
			if ( $this->claim( (int) $row['id'], $now ) && $this->send_row( $row ) ) {
				++$sent;
			}
		}
		return $sent;
	}

	/** Takes the row for this run (false: another run holds it). */
	private function claim( int $id, int $now ): bool {
		global $wpdb;
		return 1 === $wpdb->query(
			$wpdb->prepare( 'UPDATE ' . self::table() . " SET locked_until = %d WHERE id = %d AND status = 'pending' AND locked_until <= %d", $now + self::LEASE_SECONDS, $id, $now ) // phpcs:ignore WordPress.DB.PreparedSQL
		);
	}

	/** @param array<string,mixed> $row */
	private function send_row( array $row ): bool {
		$key = (string) $row['job_key'];
		if ( 'reversal' === $row['kind'] ) {
			$purchase = $this->purchase_status( (int) $row['order_id'] );
			if ( 'pending' === $purchase ) {
				// The order is not in core-api yet: its refund waits (no attempt counted).
				$this->release( $row );
				return false;
			}
			if ( 'refused' === $purchase || 'skipped' === $purchase ) {
				$this->finish( $row, 'skipped', 'the order earned nothing, so there is nothing to take back' );
				return false;
			}
		}
		$body   = array( 'brandId' => $this->client->brand_id() ) + (array) json_decode( (string) $row['body'], true );
		$result = $this->client->post( (string) $row['path'], $body );
		if ( is_wp_error( $result ) ) {
			$this->retry( $row, $result->get_error_code() );
			return false;
		}
		$status = (int) $result['status'];
		$code   = (string) ( $result['body']['code'] ?? '' );
		if ( $status >= 200 && $status < 300 ) {
			$this->finish( $row, 'sent', (string) $status . ( ! empty( $result['body']['duplicate'] ) ? ' duplicate' : '' ) );
			Pts_Debug_Log::write( $this->settings, sprintf( 'order feed: sent %s -> %d', $key, $status ) );
			return true;
		}
		if ( in_array( $status, array( 401, 408, 425, 429 ), true ) || $status >= 500 ) {
			$this->retry( $row, $status . ' ' . $code );
			return false;
		}
		// Any other 4xx is core-api's final word (a currency other than the brand's, a limit, no such event): resending the same request cannot change it.
		$message = (string) ( $result['body']['error'] ?? $result['body']['message'] ?? '' );
		$this->finish( $row, 'refused', trim( $status . ' ' . $code . ' ' . $message ) );
		Pts_Debug_Log::write( $this->settings, sprintf( 'order feed: core-api refused %s: %d %s', $key, $status, $code ) );
		return false;
	}

	/** The status of an order's purchase row, or null when it has none (completed before the feed was on). */
	private function purchase_status( int $order_id ): ?string {
		global $wpdb;
		$status = $wpdb->get_var( $wpdb->prepare( 'SELECT status FROM ' . self::table() . " WHERE order_id = %d AND kind = 'purchase'", $order_id ) ); // phpcs:ignore WordPress.DB.PreparedSQL
		return null === $status ? null : (string) $status;
	}

	/** @param array<string,mixed> $row */
	private function retry( array $row, string $why ): void {
		global $wpdb;
		$attempts = (int) $row['attempts'] + 1;
		$delay    = (int) min( self::MAX_DELAY, self::FIRST_DELAY * ( 2 ** min( 20, $attempts - 1 ) ) );
		$wpdb->update(
			self::table(),
			array(
				'attempts'        => $attempts,
				'next_attempt_at' => time() + $delay,
				'locked_until'    => 0,
				'last_result'     => substr( $why, 0, 255 ),
			),
			array( 'id' => (int) $row['id'] )
		);
		Pts_Debug_Log::write( $this->settings, sprintf( 'order feed: %s not sent (%s), attempt %d, retry in %d s', (string) $row['job_key'], $why, $attempts, $delay ) );
	}

	/** @param array<string,mixed> $row */
	private function release( array $row ): void {
		global $wpdb;
		$wpdb->update( self::table(), array( 'locked_until' => 0 ), array( 'id' => (int) $row['id'] ) );
	}

	/** @param array<string,mixed> $row */
	private function finish( array $row, string $status, string $result ): void {
		global $wpdb;
		$wpdb->update(
			self::table(),
			array(
				'status'       => $status,
				'attempts'     => (int) $row['attempts'] + ( 'skipped' === $status ? 0 : 1 ),
				'locked_until' => 0,
				'last_result'  => substr( $result, 0, 255 ),
				'sent_at'      => time(),
			),
			array( 'id' => (int) $row['id'] )
		);
	}
}
