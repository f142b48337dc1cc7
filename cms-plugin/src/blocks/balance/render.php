<?php
/**
 * Server render of the balance block: a static shell (no user data); view.js loads the visitor's data.
 *
 * @package PtsLoyalty
 * @var array $attributes
 */

defined( 'ABSPATH' ) || exit;

echo Pts_Blocks::shell( 'balance', $attributes, get_block_wrapper_attributes( array( 'class' => 'pts-block pts-balance' ) ) ); // phpcs:ignore WordPress.Security.EscapeOutput -- shell() escapes.
