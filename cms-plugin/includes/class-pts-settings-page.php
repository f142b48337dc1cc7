<?php
/**
 * Settings → pts Loyalty (manage_options, nonce-checked): core-api URL, brand id, security key (stored,
 * never printed back), the site actions that earn events, the debug log, and "test connection".
 *
 * @package PtsLoyalty
 */

defined( 'ABSPATH' ) || exit;

final class Pts_Settings_Page {
	public const SLUG          = 'pts-loyalty';
	public const SAVE_ACTION   = 'pts_loyalty_save';
	public const TEST_ACTION   = 'pts_loyalty_test';
	private const NOTICE_PREFIX = 'pts_loyalty_notice_';

	private Pts_Settings $settings;
	private Pts_Core_Client $client;

	public function __construct( Pts_Settings $settings, Pts_Core_Client $client ) {
		$this->settings = $settings;
		$this->client   = $client;
	}

	public function register(): void {
		add_action( 'admin_menu', array( $this, 'add_page' ) );
		add_action( 'admin_post_' . self::SAVE_ACTION, array( $this, 'handle_save' ) );
		add_action( 'admin_post_' . self::TEST_ACTION, array( $this, 'handle_test' ) );
	}

	public function add_page(): void {
		add_options_page( __( 'pts Loyalty', 'pts-loyalty' ), __( 'pts Loyalty', 'pts-loyalty' ), 'manage_options', self::SLUG, array( $this, 'render' ) );
	}

	public function handle_save(): void {
		$this->guard( self::SAVE_ACTION );
		$errors = $this->settings->save( wp_unslash( $_POST ) ); // phpcs:ignore WordPress.Security.NonceVerification -- guard() checked it.
		$this->finish( $errors ? array( 'error', $errors ) : array( 'success', array( __( 'Settings saved.', 'pts-loyalty' ) ) ) );
	}

	public function handle_test(): void {
		$this->guard( self::TEST_ACTION );
		$result = $this->test_connection();
		$this->finish( array( $result['ok'] ? 'success' : 'error', $result['messages'] ) );
	}

	/**
	 * Calls core-api's health (unsigned) and one signed read, and says what is wrong.
	 *
	 * @return array{ok:bool,messages:string[]}
	 */
	public function test_connection(): array {
		if ( ! $this->settings->is_configured() ) {
			return array(
				'ok'       => false,
				'messages' => array( __( 'Fill in the core-api URL, the brand id and the security key first.', 'pts-loyalty' ) ),
			);
		}
		$url    = (string) $this->settings->get( 'api_url' );
		$health = $this->client->get( '/health', array(), false );
		if ( is_wp_error( $health ) ) {
			/* translators: %s: the core-api URL */
			return array( 'ok' => false, 'messages' => array( sprintf( __( 'core-api does not answer at %s: check the URL and that core-api is running.', 'pts-loyalty' ), $url ) ) );
		}
		if ( 200 !== $health['status'] ) {
			/* translators: 1: URL, 2: HTTP status */
			return array( 'ok' => false, 'messages' => array( sprintf( __( 'core-api at %1$s answered its health check with status %2$d: it is up but not healthy.', 'pts-loyalty' ), $url, $health['status'] ) ) );
		}
		$probe  = strtolower( (string) get_option( 'admin_email' ) );
		$signed = $this->client->get( '/services/streak/status/' . Pts_Core_Client::segment( $this->client->brand_id() ) . '/' . Pts_Core_Client::segment( $probe ) );
		if ( is_wp_error( $signed ) ) {
			return array( 'ok' => false, 'messages' => array( __( 'core-api answered its health check but not a signed request: try again.', 'pts-loyalty' ) ) );
		}
		$code = (string) ( $signed['body']['code'] ?? '' );
		if ( 'unknown_brand' === ( $signed['body']['details']['reason'] ?? '' ) ) {
			return array( 'ok' => false, 'messages' => array( __( 'core-api does not know this brand id: copy it again from the brand\'s settings.', 'pts-loyalty' ) ) );
		}
		if ( 401 === $signed['status'] ) {
			return array( 'ok' => false, 'messages' => array( __( 'core-api refused the signature: the security key does not belong to this brand (or this server\'s clock is off by more than 5 minutes).', 'pts-loyalty' ) ) );
		}
		if ( 404 === $signed['status'] || 'BRAND_NOT_FOUND' === $code ) {
			return array( 'ok' => false, 'messages' => array( __( 'core-api does not know this brand id: copy it again from the brand\'s settings.', 'pts-loyalty' ) ) );
		}
		if ( 200 !== $signed['status'] ) {
			/* translators: 1: HTTP status, 2: error code */
			return array( 'ok' => false, 'messages' => array( sprintf( __( 'core-api answered the signed request with %1$d %2$s.', 'pts-loyalty' ), $signed['status'], $code ) ) );
		}
		return array( 'ok' => true, 'messages' => array( __( 'Connected: core-api is healthy and accepts this site\'s signed requests for the brand.', 'pts-loyalty' ) ) );
	}

	/**
	 * The WooCommerce order feed: on/off, which value is sent, and what the outbox holds.
	 *
	 * @param array<string,mixed> $all
	 */
	private function render_order_feed( array $all ): void {
		printf(
			'<tr><th>%s</th><td><label><input type="checkbox" name="wc_orders" value="1"%s> %s</label><br>',
			esc_html__( 'WooCommerce orders', 'pts-loyalty' ),
			checked( ! empty( $all['wc_orders'] ), true, false ),
			esc_html__( 'Send each completed order as a purchase (its value earns by the brand\'s purchase rule) and each refund as a reversal', 'pts-loyalty' )
		);
		printf( '<label for="pts-wc-order-value">%s</label> <select id="pts-wc-order-value" name="wc_order_value">', esc_html__( 'Order value sent', 'pts-loyalty' ) );
		$sources = array(
			'subtotal' => __( 'Subtotal (before shipping and taxes)', 'pts-loyalty' ),
			'total'    => __( 'Total (what the customer paid)', 'pts-loyalty' ),
		);
		foreach ( $sources as $value => $label ) {
			printf( '<option value="%s"%s>%s</option>', esc_attr( $value ), selected( $all['wc_order_value'], $value, false ), esc_html( $label ) );
		}
		echo '</select>';
		$counts = Pts_Outbox::counts();
		printf(
			'<p class="description">%s</p></td></tr>',
			esc_html(
				sprintf(
					/* translators: 1: waiting, 2: sent, 3: refused by core-api */
					__( 'Sent in the background by WP-Cron, retried until core-api takes them. Waiting: %1$d · sent: %2$d · refused: %3$d.', 'pts-loyalty' ),
					$counts['pending'],
					$counts['sent'],
					$counts['refused']
				)
			)
		);
	}

	private function guard( string $action ): void {
		if ( ! current_user_can( 'manage_options' ) ) {
			wp_die( esc_html__( 'You are not allowed to change these settings.', 'pts-loyalty' ), '', array( 'response' => 403 ) );
		}
		check_admin_referer( $action );
	}

	/** @param array{0:string,1:string[]} $notice */
	private function finish( array $notice ): void {
		set_transient( self::NOTICE_PREFIX . get_current_user_id(), $notice, 60 );
		wp_safe_redirect( admin_url( 'options-general.php?page=' . self::SLUG ) );
		exit;
	}

	public function render(): void {
		if ( ! current_user_can( 'manage_options' ) ) {
			return;
		}
		$all    = $this->settings->all();
		$notice = get_transient( self::NOTICE_PREFIX . get_current_user_id() );
		delete_transient( self::NOTICE_PREFIX . get_current_user_id() );
		$labels = array(
			'user_register'    => __( 'A user registers', 'pts-loyalty' ),
			'comment_approved' => __( 'A comment is approved', 'pts-loyalty' ),
			'post_published'   => __( 'A post is published', 'pts-loyalty' ),
			'wc_order_paid'    => __( 'A WooCommerce order is paid', 'pts-loyalty' ),
		);
		echo '<div class="wrap"><h1>' . esc_html__( 'pts Loyalty', 'pts-loyalty' ) . '</h1>';
		if ( is_array( $notice ) ) {
			printf( '<div class="notice notice-%s"><p>%s</p></div>', esc_attr( 'success' === $notice[0] ? 'success' : 'error' ), implode( '<br>', array_map( 'esc_html', (array) $notice[1] ) ) );
		}
		echo '<form method="post" action="' . esc_url( admin_url( 'admin-post.php' ) ) . '">';
		wp_nonce_field( self::SAVE_ACTION );
		echo '<input type="hidden" name="action" value="' . esc_attr( self::SAVE_ACTION ) . '"><table class="form-table" role="presentation">';
		printf( '<tr><th><label for="pts-api-url">%s</label></th><td><input id="pts-api-url" name="api_url" type="url" class="regular-text" value="%s" placeholder="https://api.example.com"></td></tr>', esc_html__( 'core-api URL', 'pts-loyalty' ), esc_attr( (string) $all['api_url'] ) );
		printf( '<tr><th><label for="pts-brand-id">%s</label></th><td><input id="pts-brand-id" name="brand_id" class="regular-text" value="%s" placeholder="0x…"></td></tr>', esc_html__( 'Brand id', 'pts-loyalty' ), esc_attr( (string) $all['brand_id'] ) );
		printf(
			'<tr><th><label for="pts-security-key">%s</label></th><td><input id="pts-security-key" name="security_key" type="password" class="regular-text" value="" autocomplete="off" placeholder="%s"><p class="description">%s</p></td></tr>',
			esc_html__( 'Security key', 'pts-loyalty' ),
			esc_attr( '' !== $all['security_key'] ? __( 'stored (leave empty to keep it)', 'pts-loyalty' ) : 'pts_sk_…' ),
			esc_html__( 'Stored on this site only; never shown again and never sent to browsers.', 'pts-loyalty' )
		);
		echo '<tr><th>' . esc_html__( 'Site actions that earn events', 'pts-loyalty' ) . '</th><td>';
		foreach ( $labels as $key => $label ) {
			printf( '<label><input type="checkbox" name="events[%s]" value="1"%s> %s <code>%s</code></label><br>', esc_attr( $key ), checked( ! empty( $all['events'][ $key ] ), true, false ), esc_html( $label ), esc_html( Pts_Settings::SITE_EVENTS[ $key ] ) );
		}
		echo '</td></tr>';
		$this->render_order_feed( $all );
		printf( '<tr><th>%s</th><td><label><input type="checkbox" name="debug_log" value="1"%s> %s</label></td></tr>', esc_html__( 'Debug log', 'pts-loyalty' ), checked( ! empty( $all['debug_log'] ), true, false ), esc_html__( 'Log each core-api call (method, route, status, time; never keys or user data) to the PHP error log', 'pts-loyalty' ) );
		echo '</table>';
		submit_button( __( 'Save settings', 'pts-loyalty' ) );
		echo '</form><form method="post" action="' . esc_url( admin_url( 'admin-post.php' ) ) . '">';
		wp_nonce_field( self::TEST_ACTION );
		echo '<input type="hidden" name="action" value="' . esc_attr( self::TEST_ACTION ) . '">';
		submit_button( __( 'Test connection', 'pts-loyalty' ), 'secondary' );
		echo '</form></div>';
	}
}
