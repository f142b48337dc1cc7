<?php
/**
 * Installs a test WordPress the way its installer does (there is no wp-cli here): creates the database,
 * runs wp_install(), installs the plugin from its zip through Plugin_Upgrader (what "Upload Plugin" does),
 * activates it, stores its settings, creates users (with an application password each) and pages.
 * Input: the JSON in env PTS_WP_SETUP. Output: one JSON line.
 *
 * @package PtsLoyaltyTests
 */

$setup = json_decode( (string) getenv( 'PTS_WP_SETUP' ), true );

mysqli_report( MYSQLI_REPORT_ERROR | MYSQLI_REPORT_STRICT );
$mysql = new mysqli( '127.0.0.1', 'root', '', '', 3306 );
$mysql->query( 'CREATE DATABASE `' . $setup['dbName'] . '` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci' );
$mysql->close();

define( 'WP_INSTALLING', true );
require $setup['root'] . '/wp-load.php';
require_once ABSPATH . 'wp-admin/includes/upgrade.php';
require_once ABSPATH . 'wp-admin/includes/plugin.php';
require_once ABSPATH . 'wp-admin/includes/file.php';
require_once ABSPATH . 'wp-admin/includes/misc.php';
require_once ABSPATH . 'wp-admin/includes/class-wp-upgrader.php';

$installed = wp_install( 'pts test site', 'admin', 'admin@example.com', true, '', $setup['adminPassword'] );
update_option( 'permalink_structure', '' );
switch_theme( 'pts-test-theme' );

$upgrader = new Plugin_Upgrader( new Automatic_Upgrader_Skin() );
$result   = $upgrader->install( $setup['pluginZip'] );
if ( true !== $result ) {
	fwrite( STDERR, 'plugin install failed: ' . ( is_wp_error( $result ) ? $result->get_error_message() : wp_json_encode( $upgrader->skin->get_upgrade_messages() ) ) . "\n" );
	exit( 1 );
}
$activated = activate_plugin( 'pts-loyalty/pts-loyalty.php' );
if ( is_wp_error( $activated ) ) {
	fwrite( STDERR, 'plugin activation failed: ' . $activated->get_error_message() . "\n" );
	exit( 1 );
}
update_option( 'pts_loyalty_settings', $setup['settings'], false );

$users = array();
foreach ( $setup['users'] as $user ) {
	$id = wp_insert_user(
		array(
			'user_login'           => $user['login'],
			'user_email'           => $user['email'],
			'user_pass'            => $user['password'],
			'display_name'         => $user['login'],
			'role'                 => 'subscriber',
			'show_admin_bar_front' => 'false',
		)
	);
	if ( is_wp_error( $id ) ) {
		fwrite( STDERR, $id->get_error_message() . "\n" );
		exit( 1 );
	}
	list( $app_password ) = WP_Application_Passwords::create_new_application_password( $id, array( 'name' => 'tests' ) );
	$users[ $user['login'] ] = array(
		'id'                  => $id,
		'applicationPassword' => $app_password,
	);
}

$pages = array();
foreach ( $setup['pages'] as $page ) {
	$id = wp_insert_post(
		array(
			'post_type'    => 'page',
			'post_status'  => 'publish',
			'post_title'   => $page['title'],
			'post_name'    => $page['slug'],
			'post_content' => $page['content'],
		),
		true
	);
	$pages[ $page['slug'] ] = get_permalink( $id );
}

echo wp_json_encode(
	array(
		'users' => $users,
		'pages' => $pages,
	)
) . "\n";
