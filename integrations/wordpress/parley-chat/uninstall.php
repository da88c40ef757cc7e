<?php
/**
 * Runs when the plugin is deleted from the Plugins screen: removes its settings, on every site of a network.
 *
 * @package ParleyChat
 */

if ( ! defined( 'WP_UNINSTALL_PLUGIN' ) ) {
	exit;
}

delete_option( 'parley_chat_settings' );

if ( is_multisite() ) {
	foreach ( get_sites(
		array(
			'fields' => 'ids',
			'number' => 0,
		)
	) as $parley_chat_site_id ) {
		delete_blog_option( $parley_chat_site_id, 'parley_chat_settings' );
	}
}
