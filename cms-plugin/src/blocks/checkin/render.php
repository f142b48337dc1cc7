<?php
/**
 * Server render of the checkin block: a static shell (no user data); view.js loads the visitor's data.
 *
 * @package PtsLoyalty
 * @var array $attributes
 */

defined( 'ABSPATH' ) || exit;

echo Pts_Blocks::shell( 'checkin', $attributes, get_block_wrapper_attributes( array( 'class' => 'pts-block pts-checkin' ) ) ); // phpcs:ignore WordPress.Security.EscapeOutput -- shell() escapes.
