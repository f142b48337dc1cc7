<?php
/**
 * Server render of the perks block: a static shell (no user data); view.js loads the visitor's data.
 *
 * @package PtsLoyalty
 * @var array $attributes
 */

defined( 'ABSPATH' ) || exit;

echo Pts_Blocks::shell( 'perks', $attributes, get_block_wrapper_attributes( array( 'class' => 'pts-block pts-perks' ) ) ); // phpcs:ignore WordPress.Security.EscapeOutput -- shell() escapes.
