<?php
/**
 * Blocks (built from src/blocks into build/, block.json as the source of truth) and the same widgets as
 * shortcodes for classic themes. Each renders a static shell; the per-user data is loaded in the browser
 * through the REST routes, so a page cache never serves one user's data to another.
 *
 * @package PtsLoyalty
 */

defined( 'ABSPATH' ) || exit;

final class Pts_Blocks {
	public const BLOCKS = array( 'checkin', 'leaderboard', 'perks', 'balance' );

	public function register(): void {
		add_action( 'init', array( $this, 'register_assets' ), 5 );
		add_action( 'init', array( $this, 'register_blocks' ) );
		add_action( 'init', array( $this, 'register_shortcodes' ) );
	}

	public function register_assets(): void {
		// Blocks built by @wordpress/scripts 35 depend on `react-jsx-runtime`, which WordPress adds in 6.6 only;
		// without it the editor script silently never loads.
		if ( ! wp_script_is( 'react-jsx-runtime', 'registered' ) ) {
			wp_register_script( 'react-jsx-runtime', plugins_url( 'assets/react-jsx-runtime.js', PTS_LOYALTY_FILE ), array( 'react' ), PTS_LOYALTY_VERSION, true );
		}
		wp_register_style( 'pts-loyalty', plugins_url( 'assets/pts-loyalty.css', PTS_LOYALTY_FILE ), array(), PTS_LOYALTY_VERSION );
	}

	public function register_blocks(): void {
		foreach ( self::BLOCKS as $name ) {
			$dir = PTS_LOYALTY_DIR . '/build/' . $name;
			if ( file_exists( $dir . '/block.json' ) ) {
				register_block_type( $dir );
			}
		}
	}

	public function register_shortcodes(): void {
		add_shortcode( 'pts_checkin', fn() => $this->shortcode( 'checkin', array() ) );
		add_shortcode( 'pts_balance', fn() => $this->shortcode( 'balance', array() ) );
		add_shortcode( 'pts_perks', fn() => $this->shortcode( 'perks', array() ) );
		add_shortcode(
			'pts_leaderboard',
			function ( $atts ) {
				$atts = shortcode_atts(
					array(
						'metric' => 'pts_earned',
						'period' => 'week',
						'limit'  => 10,
					),
					is_array( $atts ) ? $atts : array(),
					'pts_leaderboard'
				);
				return $this->shortcode( 'leaderboard', $atts );
			}
		);
	}

	/** @param array<string,mixed> $attributes */
	private function shortcode( string $name, array $attributes ): string {
		if ( ! file_exists( PTS_LOYALTY_DIR . '/build/' . $name . '/block.json' ) ) {
			return '';
		}
		wp_enqueue_script( generate_block_asset_handle( 'pts/' . $name, 'viewScript' ) );
		wp_enqueue_style( 'pts-loyalty' );
		return self::shell( $name, $attributes, 'class="pts-block pts-' . esc_attr( $name ) . '"' );
	}

	/**
	 * The static shell of a widget: no user data, only the widget's name and its (validated) settings.
	 *
	 * @param array<string,mixed> $attributes
	 */
	public static function shell( string $name, array $attributes, string $wrapper_attributes ): string {
		$data = '';
		if ( 'leaderboard' === $name ) {
			$metric = in_array( $attributes['metric'] ?? '', array( 'pts_earned', 'activity', 'streak' ), true ) ? $attributes['metric'] : 'pts_earned';
			$period = in_array( $attributes['period'] ?? '', array( 'week', 'month', 'all' ), true ) ? $attributes['period'] : 'week';
			$limit  = max( 1, min( 100, (int) ( $attributes['limit'] ?? 10 ) ) );
			$data   = sprintf( ' data-metric="%s" data-period="%s" data-limit="%d"', esc_attr( $metric ), esc_attr( $period ), $limit );
		}
		return sprintf(
			'<div %s data-pts-widget="%s"%s><p class="pts-status" role="status">%s</p></div>',
			$wrapper_attributes,
			esc_attr( $name ),
			$data,
			esc_html__( 'Loading…', 'pts-loyalty' )
		);
	}
}
