<?php
/**
 * Server render of the leaderboard block: a static shell (no user data); view.js loads the visitor's data.
 *
 * @package PtsLoyalty
 * @var array $attributes
 */

defined( 'ABSPATH' ) || exit;

echo Pts_Blocks::shell( 'leaderboard', $attributes, get_block_wrapper_attributes( array( 'class' => 'pts-block pts-leaderboard' ) ) ); // phpcs:ignore WordPress.Security.EscapeOutput -- shell() escapes.
