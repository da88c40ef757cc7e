<?php
/**
 * Plugin Name:       Parley Chat
 * Plugin URI:        https://github.com/parley-dev/parley
 * Description:       Adds the Parley AI chat widget to every page of your site. Enter your publishable API key and merchant ID under Settings, Parley Chat.
 * Version:           0.1.0
 * Requires at least: 6.1
 * Requires PHP:      7.4
 * Author:            Parley
 * Author URI:        https://github.com/parley-dev
 * License:           GPLv2 or later
 * License URI:       https://www.gnu.org/licenses/gpl-2.0.html
 * Text Domain:       parley-chat
 * Domain Path:       /languages
 *
 * @package ParleyChat
 */

defined( 'ABSPATH' ) || exit;

define( 'PARLEY_CHAT_VERSION', '0.1.0' );

/** Name of the one option holding the plugin's settings (an array). */
define( 'PARLEY_CHAT_OPTION', 'parley_chat_settings' );

/** Settings group, as given to register_setting() and settings_fields(). */
define( 'PARLEY_CHAT_GROUP', 'parley_chat' );

/** Slug of the settings page under Settings. */
define( 'PARLEY_CHAT_PAGE', 'parley-chat' );

/** Handle of the widget script. */
define( 'PARLEY_CHAT_HANDLE', 'parley-chat-widget' );

/**
 * The settings with every key present.
 *
 * @return array{api_key: string, merchant_id: string, widget_url: string}
 */
function parley_chat_defaults() {
	return array(
		'api_key'     => '',
		'merchant_id' => '',
		'widget_url'  => '',
	);
}

/**
 * The stored settings, completed with the defaults.
 *
 * @return array{api_key: string, merchant_id: string, widget_url: string}
 */
function parley_chat_get_settings() {
	$stored   = get_option( PARLEY_CHAT_OPTION, array() );
	$defaults = parley_chat_defaults();
	if ( ! is_array( $stored ) ) {
		return $defaults;
	}
	$settings = array();
	foreach ( $defaults as $name => $default ) {
		$settings[ $name ] = isset( $stored[ $name ] ) && is_string( $stored[ $name ] ) ? $stored[ $name ] : $default;
	}
	return $settings;
}

/**
 * Whether the widget can be shown: it needs all three settings.
 *
 * @param array $settings Settings from parley_chat_get_settings().
 * @return bool
 */
function parley_chat_is_configured( $settings ) {
	return '' !== $settings['api_key'] && '' !== $settings['merchant_id'] && '' !== $settings['widget_url'];
}

/**
 * Whether a value looks like a publishable key: "pk_" then URL-safe characters, at least 32 characters in all.
 *
 * @param string $key Candidate key.
 * @return bool
 */
function parley_chat_is_publishable_key( $key ) {
	return 1 === preg_match( '/^pk_[A-Za-z0-9_-]{29,253}$/', $key );
}

/**
 * Whether a value is a merchant ID: a DNS label (lowercase letters, digits and '-', at most 63 characters, starting
 * and ending with a letter or digit).
 *
 * @param string $id Candidate merchant ID.
 * @return bool
 */
function parley_chat_is_merchant_id( $id ) {
	return strlen( $id ) <= 63 && 1 === preg_match( '/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/', $id );
}

/**
 * Normalises a widget URL: the address widget.js is served from, without "/widget.js" and without a trailing slash.
 * Only https is accepted, and http for a local address (localhost, *.localhost, 127.0.0.1, [::1]). No user, password,
 * query or fragment, and only plain characters in the path, so the URL is printed in the page exactly as stored.
 *
 * @param string $url URL as entered.
 * @return string|false The normalised URL, or false when it is not acceptable.
 */
function parley_chat_normalize_widget_url( $url ) {
	$url = preg_replace( '#/widget\.js$#i', '', trim( $url ) );
	$url = rtrim( $url, '/' );
	if ( 1 !== preg_match( '#^(https?)://([^/?\#@]+)((?:/[A-Za-z0-9._~%-]+)*)$#i', $url, $m ) ) {
		return false;
	}
	$scheme = strtolower( $m[1] );
	$host   = strtolower( $m[2] );
	$path   = $m[3];
	$port   = '';
	if ( 1 === preg_match( '/^(.*):([0-9]{1,5})$/', $host, $hp ) ) {
		$host = $hp[1];
		$port = ':' . $hp[2];
		if ( (int) $hp[2] < 1 || (int) $hp[2] > 65535 ) {
			return false;
		}
	}
	$is_ipv6 = 1 === preg_match( '/^\[[0-9a-f:.]+\]$/', $host );
	if ( ! $is_ipv6 && 1 !== preg_match( '/^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/', $host ) ) {
		return false;
	}
	if ( 1 === preg_match( '/%(?![0-9A-Fa-f]{2})/', $path ) ) {
		return false;
	}
	$local = 'localhost' === $host || '127.0.0.1' === $host || '[::1]' === $host || '.localhost' === substr( $host, -10 );
	if ( 'https' !== $scheme && ! ( 'http' === $scheme && $local ) ) {
		return false;
	}
	$normalized = $scheme . '://' . $host . $port . $path;
	// esc_url() must leave it as it is, so that the page carries exactly what was saved.
	if ( esc_url_raw( $normalized ) !== $normalized ) {
		return false;
	}
	return $normalized;
}

/**
 * The key as shown once saved: its start and its end, e.g. "pk_abcd••••••wxyz".
 *
 * @param string $key A saved key.
 * @return string
 */
function parley_chat_mask_key( $key ) {
	if ( strlen( $key ) < 16 ) {
		return str_repeat( '•', 6 );
	}
	return substr( $key, 0, 7 ) . str_repeat( '•', 6 ) . substr( $key, -4 );
}

/**
 * The embed tag, exactly in the shape of Parley's documentation:
 * <script src="{widget_url}/widget.js" data-api-key="..." data-merchant-id="..." async></script>
 *
 * @param string $src         URL of widget.js.
 * @param string $api_key     Publishable key.
 * @param string $merchant_id Merchant ID.
 * @return string
 */
function parley_chat_tag( $src, $api_key, $merchant_id ) {
	return sprintf(
		'<script src="%s" data-api-key="%s" data-merchant-id="%s" async></script>',
		esc_url( $src ),
		esc_attr( $api_key ),
		esc_attr( $merchant_id )
	);
}

/*
 * Translations.
 */

/**
 * Loads the plugin's translations from its languages/ folder.
 */
function parley_chat_load_textdomain() {
	load_plugin_textdomain( 'parley-chat', false, dirname( plugin_basename( __FILE__ ) ) . '/languages' );
}
add_action( 'init', 'parley_chat_load_textdomain' );

/*
 * Activation: create the option, so that the first save updates it (WordPress runs the sanitize callback twice when
 * a save has to create the option).
 */

/**
 * Creates the settings option, autoloaded since every front-end page reads it.
 */
function parley_chat_activate() {
	add_option( PARLEY_CHAT_OPTION, parley_chat_defaults(), '', 'yes' );
}
register_activation_hook( __FILE__, 'parley_chat_activate' );

/*
 * Front end: the widget's script tag on every page once the plugin is configured. The admin, the login page and the
 * customizer controls never run wp_enqueue_scripts, so the tag is never printed there.
 */

/**
 * Enqueues widget.js (async, in the footer; no version query string, since the URL is the merchant's runtime).
 */
function parley_chat_enqueue_widget() {
	if ( is_admin() ) {
		return;
	}
	$settings = parley_chat_get_settings();
	if ( ! parley_chat_is_configured( $settings ) ) {
		return;
	}
	wp_enqueue_script(
		PARLEY_CHAT_HANDLE,
		$settings['widget_url'] . '/widget.js',
		array(),
		null, // phpcs:ignore WordPress.WP.EnqueuedResourceParameters.MissingVersion -- the runtime versions widget.js with its ETag.
		array(
			'in_footer' => true,
			'strategy'  => 'async', // WordPress 6.3 and later; before, the array only means "in the footer".
		)
	);
}
add_action( 'wp_enqueue_scripts', 'parley_chat_enqueue_widget' );

/**
 * Prints widget.js as the documented embed tag: the data attributes, the boolean async attribute, and nothing else
 * (WordPress would add id="...-js" and, on some versions and themes, type="text/javascript" or async="async").
 * Inline scripts that other code attaches to the handle are kept.
 *
 * @param string $tag    The tag WordPress built.
 * @param string $handle The script's handle.
 * @param string $src    The script's URL, after the script_loader_src filter.
 * @return string
 */
function parley_chat_script_loader_tag( $tag, $handle, $src ) {
	if ( PARLEY_CHAT_HANDLE !== $handle ) {
		return $tag;
	}
	$settings = parley_chat_get_settings();
	if ( ! parley_chat_is_configured( $settings ) ) {
		return $tag;
	}
	$ours     = parley_chat_tag( $src, $settings['api_key'], $settings['merchant_id'] );
	$replaced = 0;
	$tag      = preg_replace_callback(
		'#<script\b[^>]*\ssrc=[^>]*>\s*</script>#i',
		function () use ( $ours ) {
			return $ours;
		},
		$tag,
		1,
		$replaced
	);
	return $replaced ? $tag : $ours . "\n";
}
add_filter( 'script_loader_tag', 'parley_chat_script_loader_tag', 10, 3 );

/*
 * Admin: the settings screen under Settings.
 */

/**
 * Registers the setting, its section and its fields.
 */
function parley_chat_register_settings() {
	register_setting(
		PARLEY_CHAT_GROUP,
		PARLEY_CHAT_OPTION,
		array(
			'type'              => 'array',
			'description'       => __( 'Parley Chat settings: publishable API key, merchant ID and widget URL.', 'parley-chat' ),
			'sanitize_callback' => 'parley_chat_sanitize_settings',
			'show_in_rest'      => false,
			'default'           => parley_chat_defaults(),
		)
	);

	add_settings_section(
		'parley_chat_widget',
		__( 'Chat widget', 'parley-chat' ),
		'parley_chat_render_section',
		PARLEY_CHAT_PAGE
	);

	add_settings_field(
		'parley_chat_api_key',
		__( 'API key', 'parley-chat' ),
		'parley_chat_render_api_key_field',
		PARLEY_CHAT_PAGE,
		'parley_chat_widget',
		array( 'label_for' => 'parley_chat_api_key' )
	);
	add_settings_field(
		'parley_chat_merchant_id',
		__( 'Merchant ID', 'parley-chat' ),
		'parley_chat_render_merchant_id_field',
		PARLEY_CHAT_PAGE,
		'parley_chat_widget',
		array( 'label_for' => 'parley_chat_merchant_id' )
	);
	add_settings_field(
		'parley_chat_widget_url',
		__( 'Widget URL', 'parley-chat' ),
		'parley_chat_render_widget_url_field',
		PARLEY_CHAT_PAGE,
		'parley_chat_widget',
		array( 'label_for' => 'parley_chat_widget_url' )
	);
}
add_action( 'admin_init', 'parley_chat_register_settings' );

/**
 * Sanitises a submitted settings form. Each field is checked on its own: a rejected value leaves that setting as it
 * was and adds a settings error saying why; valid fields are saved. A blank API key keeps the saved one, unless
 * "Remove the saved key" is ticked; a new key replaces it either way. Running it
 * on its own output returns the same value and adds no error (WordPress may call it twice).
 *
 * @param mixed $input The submitted array (already unslashed by options.php).
 * @return array The settings to store.
 */
function parley_chat_sanitize_settings( $input ) {
	$old    = parley_chat_get_settings();
	$output = $old;
	if ( ! is_array( $input ) ) {
		return $output;
	}

	// API key.
	$key = isset( $input['api_key'] ) && is_scalar( $input['api_key'] ) ? trim( (string) $input['api_key'] ) : '';
	$unchanged = '' === $key || ( '' !== $old['api_key'] && parley_chat_mask_key( $old['api_key'] ) === $key );
	if ( $unchanged && ! empty( $input['clear_api_key'] ) ) {
		$output['api_key'] = '';
	} elseif ( $unchanged ) {
		$output['api_key'] = $old['api_key'];
	} elseif ( 0 === stripos( $key, 'sk_' ) ) {
		add_settings_error(
			PARLEY_CHAT_OPTION,
			'parley_chat_secret_key',
			__( 'That is a secret key (it starts with sk_). A secret key must never be put in a web page: every visitor could read it and use your account with it. Enter a publishable key, which starts with pk_. The secret key was not saved; rotate it if it was shared anywhere.', 'parley-chat' ),
			'error'
		);
	} elseif ( ! parley_chat_is_publishable_key( $key ) ) {
		add_settings_error(
			PARLEY_CHAT_OPTION,
			'parley_chat_invalid_key',
			__( 'The API key was not saved: a publishable key starts with pk_ and has at least 32 letters, digits, dashes and underscores.', 'parley-chat' ),
			'error'
		);
	} else {
		$output['api_key'] = $key;
	}

	// Merchant ID.
	$merchant = isset( $input['merchant_id'] ) && is_scalar( $input['merchant_id'] ) ? strtolower( trim( (string) $input['merchant_id'] ) ) : $old['merchant_id'];
	if ( '' === $merchant || parley_chat_is_merchant_id( $merchant ) ) {
		$output['merchant_id'] = $merchant;
	} else {
		add_settings_error(
			PARLEY_CHAT_OPTION,
			'parley_chat_invalid_merchant_id',
			__( 'The merchant ID was not saved: it has at most 63 lowercase letters, digits and dashes, and starts and ends with a letter or a digit.', 'parley-chat' ),
			'error'
		);
	}

	// Widget URL.
	$url = isset( $input['widget_url'] ) && is_scalar( $input['widget_url'] ) ? trim( (string) $input['widget_url'] ) : $old['widget_url'];
	if ( '' === $url ) {
		$output['widget_url'] = '';
	} else {
		$normalized = parley_chat_normalize_widget_url( $url );
		if ( false !== $normalized ) {
			$output['widget_url'] = $normalized;
		} else {
			add_settings_error(
				PARLEY_CHAT_OPTION,
				'parley_chat_invalid_widget_url',
				__( 'The widget URL was not saved: it must be an https:// address, such as https://chat.example.com (http:// only for localhost), without a query string.', 'parley-chat' ),
				'error'
			);
		}
	}

	return $output;
}

/**
 * Adds the page under Settings, for administrators only.
 */
function parley_chat_add_settings_page() {
	add_options_page(
		__( 'Parley Chat', 'parley-chat' ),
		__( 'Parley Chat', 'parley-chat' ),
		'manage_options',
		PARLEY_CHAT_PAGE,
		'parley_chat_render_settings_page'
	);
}
add_action( 'admin_menu', 'parley_chat_add_settings_page' );

/**
 * Prints the introduction of the settings section.
 */
function parley_chat_render_section() {
	echo '<p>' . esc_html__( 'Copy these values from the script tag Parley gives you for your site: the API key is its data-api-key, the merchant ID its data-merchant-id, and the widget URL its src without /widget.js. The chat appears on every page of your site once all three are set.', 'parley-chat' ) . '</p>';
}

/**
 * Prints the API key field: always empty, with the saved key masked beside it.
 */
function parley_chat_render_api_key_field() {
	$settings = parley_chat_get_settings();
	$saved    = '' !== $settings['api_key'];
	printf(
		'<input type="text" id="parley_chat_api_key" name="%1$s[api_key]" value="" class="regular-text code" autocomplete="off" spellcheck="false" placeholder="%2$s" />',
		esc_attr( PARLEY_CHAT_OPTION ),
		esc_attr( $saved ? parley_chat_mask_key( $settings['api_key'] ) : 'pk_…' )
	);
	echo '<p class="description">' . esc_html__( 'Your publishable key, which starts with pk_. Every visitor can see it in your pages, which is why it only works on the domains you allow in Parley. Never enter a secret key (sk_).', 'parley-chat' ) . '</p>';
	if ( $saved ) {
		echo '<p class="description">';
		printf(
			/* translators: %s: the saved API key with its middle hidden, e.g. pk_abcd••••••wxyz */
			esc_html__( 'Saved key: %s. Leave the field blank to keep it.', 'parley-chat' ),
			'<code id="parley_chat_saved_key">' . esc_html( parley_chat_mask_key( $settings['api_key'] ) ) . '</code>'
		);
		echo '</p><p><label for="parley_chat_clear_api_key">';
		printf( '<input type="checkbox" id="parley_chat_clear_api_key" name="%s[clear_api_key]" value="1" /> ', esc_attr( PARLEY_CHAT_OPTION ) );
		echo esc_html__( 'Remove the saved key (the chat disappears from your site)', 'parley-chat' ) . '</label></p>';
	}
}

/**
 * Prints the merchant ID field.
 */
function parley_chat_render_merchant_id_field() {
	$settings = parley_chat_get_settings();
	printf(
		'<input type="text" id="parley_chat_merchant_id" name="%1$s[merchant_id]" value="%2$s" class="regular-text code" autocomplete="off" spellcheck="false" maxlength="63" placeholder="acme" />',
		esc_attr( PARLEY_CHAT_OPTION ),
		esc_attr( $settings['merchant_id'] )
	);
	echo '<p class="description">' . esc_html__( 'Lowercase letters, digits and dashes: the data-merchant-id of your script tag.', 'parley-chat' ) . '</p>';
}

/**
 * Prints the widget URL field.
 */
function parley_chat_render_widget_url_field() {
	$settings = parley_chat_get_settings();
	printf(
		'<input type="url" id="parley_chat_widget_url" name="%1$s[widget_url]" value="%2$s" class="regular-text code" autocomplete="off" spellcheck="false" placeholder="https://chat.example.com" />',
		esc_attr( PARLEY_CHAT_OPTION ),
		esc_url( $settings['widget_url'] )
	);
	echo '<p class="description">' . esc_html__( 'The address widget.js is served from: your Parley runtime, or the CDN in front of it, without /widget.js.', 'parley-chat' ) . '</p>';
}

/**
 * Prints the settings page. Settings errors and "Settings saved." are printed by WordPress for pages under Settings.
 */
function parley_chat_render_settings_page() {
	if ( ! current_user_can( 'manage_options' ) ) {
		return;
	}
	$settings = parley_chat_get_settings();
	echo '<div class="wrap">';
	echo '<h1>' . esc_html( get_admin_page_title() ) . '</h1>';

	if ( parley_chat_is_configured( $settings ) ) {
		echo '<div class="notice notice-success inline"><p>';
		echo esc_html__( 'The chat is on every page of your site.', 'parley-chat' ) . ' ';
		printf( '<a href="%s" target="_blank" rel="noopener">%s</a>', esc_url( home_url( '/' ) ), esc_html__( 'View your site', 'parley-chat' ) );
		echo '</p></div>';
	} else {
		echo '<div class="notice notice-warning inline"><p>' . esc_html__( 'The chat is not on your site yet: enter the API key, the merchant ID and the widget URL.', 'parley-chat' ) . '</p></div>';
	}

	echo '<form action="options.php" method="post">';
	settings_fields( PARLEY_CHAT_GROUP );
	do_settings_sections( PARLEY_CHAT_PAGE );
	submit_button();
	echo '</form>';

	if ( parley_chat_is_configured( $settings ) ) {
		echo '<h2>' . esc_html__( 'Tag added to your pages', 'parley-chat' ) . '</h2>';
		echo '<p><code>' . esc_html( parley_chat_tag( $settings['widget_url'] . '/widget.js', parley_chat_mask_key( $settings['api_key'] ), $settings['merchant_id'] ) ) . '</code></p>';
	}
	echo '</div>';
}

/**
 * Adds a "Settings" link to the plugin's row on the Plugins screen.
 *
 * @param array $links The row's action links.
 * @return array
 */
function parley_chat_action_links( $links ) {
	if ( current_user_can( 'manage_options' ) ) {
		$url = admin_url( 'options-general.php?page=' . PARLEY_CHAT_PAGE );
		array_unshift( $links, sprintf( '<a href="%s">%s</a>', esc_url( $url ), esc_html__( 'Settings', 'parley-chat' ) ) );
	}
	return $links;
}
add_filter( 'plugin_action_links_' . plugin_basename( __FILE__ ), 'parley_chat_action_links' );

/**
 * Reminds administrators on the Plugins screen that the plugin shows nothing until it is configured.
 */
function parley_chat_setup_notice() {
	$screen = function_exists( 'get_current_screen' ) ? get_current_screen() : null;
	if ( ! $screen || 'plugins' !== $screen->id || ! current_user_can( 'manage_options' ) ) {
		return;
	}
	if ( parley_chat_is_configured( parley_chat_get_settings() ) ) {
		return;
	}
	printf(
		'<div class="notice notice-info is-dismissible"><p>%s <a href="%s">%s</a></p></div>',
		esc_html__( 'Parley Chat is active but not shown on your site yet.', 'parley-chat' ),
		esc_url( admin_url( 'options-general.php?page=' . PARLEY_CHAT_PAGE ) ),
		esc_html__( 'Enter your API key', 'parley-chat' )
	);
}
add_action( 'admin_notices', 'parley_chat_setup_notice' );
