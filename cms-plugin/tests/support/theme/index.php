<?php
/**
 * The whole theme: the loop with the_content, so blocks and shortcodes render as on any classic theme.
 *
 * @package PtsTestTheme
 */
?><!DOCTYPE html>
<html <?php language_attributes(); ?>>
<head><meta charset="<?php bloginfo( 'charset' ); ?>"><title><?php wp_title(); ?></title><?php wp_head(); ?></head>
<body <?php body_class(); ?>>
<?php
while ( have_posts() ) {
	the_post();
	echo '<h1>' . esc_html( get_the_title() ) . '</h1>';
	the_content();
}
wp_footer();
?>
</body>
</html>
