#!/usr/bin/env bash
# Tests the WordPress plugin in a real WordPress: Debian's wordpress package served by PHP's built-in server, with a
# throwaway MariaDB of its own (never the machine's own database server).
#
# It builds the plugin zip with hack/wordpress-plugin.sh, runs php -l on every PHP file in it, installs WordPress
# through its own wp_install(), installs the plugin from the zip and activates it, then, over HTTP as a logged-in
# administrator, saves the settings through the settings form (nonce and referer scraped from the form) and checks:
#   - every front-end page (home, post, page, search, 404; a block theme and a classic theme) carries exactly the
#     embed tag, and admin pages and the login page do not;
#   - the key is shown masked on the settings screen and never in full in the admin; a blank key keeps it;
#   - a secret key (sk_...) is refused with an error and stored nowhere in the database; bad merchant IDs and
#     plain-http URLs are refused; http://localhost is accepted;
#   - a form without a valid nonce, an editor and an anonymous visitor change nothing;
#   - the plugin's files print nothing when requested directly; uninstall removes its option;
#   - the plugin adds no PHP error, warning or notice to WordPress's debug log.
#
# "Exactly the embed tag" means: the page contains, byte for byte and exactly once,
#   <script src="https://chat.example.com/widget.js" data-api-key="pk_..." data-merchant-id="acme" async></script>
# and no other <script> element refers to widget.js. So the attributes are these four in this order, with these
# values, double-quoted, async as a bare boolean attribute, and no other attribute (not even WordPress's id="...").
#
# Run as root on Debian (as CI does): the packages it needs are installed when missing (apt-get, without starting
# any service). PARLEY_WP_KEEP=1 keeps the temporary directory (WordPress, database, logs) for inspection.
set -euo pipefail
cd "$(dirname "$0")/.."
started=$(date +%s)

say() { echo "test-wordpress: $*"; }
fail() {
  echo "test-wordpress: FAIL: $*" >&2
  exit 1
}

tmp="$(mktemp -d /tmp/parley-wp.XXXXXX)" # short: the database socket lives here (108-byte limit)
own_policy=
db_pid=
web_pid=
cleanup() {
  status=$?
  [ -z "$own_policy" ] || rm -f /usr/sbin/policy-rc.d
  [ -z "$web_pid" ] || kill "$web_pid" 2>/dev/null || true
  if [ -n "$db_pid" ]; then
    kill "$db_pid" 2>/dev/null || true
    for _ in $(seq 100); do kill -0 "$db_pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$db_pid" 2>/dev/null || true
  fi
  wait 2>/dev/null || true
  if [ "$status" != 0 ]; then
    for f in debug.log web.log db.err; do
      [ -s "$tmp/$f" ] && { echo "--- last lines of $f" >&2; tail -15 "$tmp/$f" >&2; }
    done
  fi
  if [ -n "${PARLEY_WP_KEEP:-}" ]; then say "kept $tmp"; else rm -rf "$tmp"; fi
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Packages. The themes are Recommends of wordpress, so --no-install-recommends leaves WordPress without any theme
# (and without a theme, wp_head and wp_footer never run): both are installed explicitly.
packages=()
command -v php >/dev/null || packages+=(php-cli)
{ command -v php >/dev/null && php -r 'exit(extension_loaded("mysqli") ? 0 : 1);'; } || packages+=(php-mysql)
[ -f /usr/share/wordpress/wp-settings.php ] || packages+=(wordpress)
[ -d /usr/share/wordpress/wp-content/themes/twentytwentythree ] || packages+=(wordpress-theme-twentytwentythree)
[ -d /usr/share/wordpress/wp-content/themes/twentytwentyone ] || packages+=(wordpress-theme-twentytwentyone)
{ [ -x /usr/sbin/mariadbd ] || [ -x /usr/sbin/mysqld ]; } && command -v mariadb-install-db >/dev/null ||
  packages+=(mariadb-server)
command -v mariadb >/dev/null || packages+=(mariadb-client)
command -v curl >/dev/null || packages+=(curl)
command -v unzip >/dev/null || packages+=(unzip)
command -v zip >/dev/null || command -v python3 >/dev/null || packages+=(zip)
if [ "${#packages[@]}" -gt 0 ]; then
  if [ "$(id -u)" != 0 ]; then
    fail "missing packages; run as root, or first: sudo apt-get install -y --no-install-recommends ${packages[*]}"
  fi
  say "installing ${packages[*]}"
  # Installing must not start Apache (a dependency of wordpress) or the system MariaDB: policy-rc.d says no, unless
  # the machine already has its own policy.
  policy=/usr/sbin/policy-rc.d
  if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod 755 "$policy" && own_policy=1
  fi
  status=0
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    "${packages[@]}"; } >"$tmp/apt.log" 2>&1 || status=$?
  [ -z "$own_policy" ] || rm -f "$policy"
  own_policy=
  [ "$status" = 0 ] || { tail -30 "$tmp/apt.log" >&2; fail "apt-get install ${packages[*]}"; }
fi
mariadbd=/usr/sbin/mariadbd
[ -x "$mariadbd" ] || mariadbd=/usr/sbin/mysqld

rand() { php -r 'echo bin2hex(random_bytes((int) $argv[1]));' "$1"; }

say "WordPress $(sed -n "s/^\$wp_version = '\(.*\)';/\1/p" /usr/share/wordpress/wp-includes/version.php)," \
  "PHP $(php -r 'echo PHP_VERSION;'), $("$mariadbd" --version | sed 's/^.*Ver //')"

# The plugin, as a user installs it: from the zip.
zip="$(hack/wordpress-plugin.sh "$tmp/parley-chat.zip")"
unzip -Z1 "$zip" >"$tmp/zip.list"
! grep -qv '^parley-chat/' "$tmp/zip.list" || fail "the zip has files outside parley-chat/: $(grep -v '^parley-chat/' "$tmp/zip.list")"
for f in parley-chat.php uninstall.php readme.txt; do
  grep -qx "parley-chat/$f" "$tmp/zip.list" || fail "the zip has no parley-chat/$f"
done
mkdir "$tmp/unzipped"
unzip -q "$zip" -d "$tmp/unzipped"
say "php -l on every PHP file of the plugin"
while IFS= read -r f; do
  php -l "$f" >"$tmp/lint.log" 2>&1 || { cat "$tmp/lint.log" >&2; fail "php -l ${f#"$tmp/unzipped/"}"; }
done < <(find "$tmp/unzipped" -name '*.php')

say "starting a throwaway MariaDB"
sock="$tmp/db.sock"
as_root=()
[ "$(id -u)" != 0 ] || as_root=(--user=root)
mariadb-install-db --no-defaults "${as_root[@]}" --datadir="$tmp/db" --auth-root-authentication-method=normal \
  --skip-test-db --skip-name-resolve --force >"$tmp/db-install.log" 2>&1 || { cat "$tmp/db-install.log" >&2; fail "mariadb-install-db"; }
"$mariadbd" --no-defaults "${as_root[@]}" --datadir="$tmp/db" --socket="$sock" --pid-file="$tmp/db.pid" \
  --skip-networking --skip-name-resolve --log-error="$tmp/db.err" --innodb-flush-log-at-trx-commit=0 >/dev/null 2>&1 &
db_pid=$!
sql() { mariadb --no-defaults --socket="$sock" -uroot "$@"; }
for _ in $(seq 300); do
  sql -e 'SELECT 1' >/dev/null 2>&1 && break
  kill -0 "$db_pid" 2>/dev/null || fail "MariaDB exited: $(tail -5 "$tmp/db.err")"
  sleep 0.1
done
db_password="$(rand 16)"
sql -e "CREATE DATABASE wordpress CHARACTER SET utf8mb4;
  CREATE USER 'wordpress'@'localhost' IDENTIFIED BY '$db_password';
  GRANT ALL ON wordpress.* TO 'wordpress'@'localhost';" || fail "MariaDB did not start: $(tail -5 "$tmp/db.err")"

say "copying WordPress and serving it with php -S"
wp="$tmp/wordpress"
mkdir "$wp"
# Dereference Debian's symlinks (relative ones into /usr/share/javascript and /usr/share/php would break in a copy);
# .htaccess points into /etc/wordpress and is Apache's.
for f in /usr/share/wordpress/* ; do cp -RL "$f" "$wp/"; done
free_port() { php -r '$s = stream_socket_server("tcp://127.0.0.1:0"); echo substr(strrchr(stream_socket_get_name($s, false), ":"), 1);'; }
for _ in 1 2 3 4 5; do
  port="$(free_port)"
  php -S "127.0.0.1:$port" -t "$wp" >"$tmp/web.log" 2>&1 &
  web_pid=$!
  for _ in $(seq 50); do
    curl -s -o /dev/null "http://127.0.0.1:$port/readme.html" && break
    kill -0 "$web_pid" 2>/dev/null || break
    sleep 0.1
  done
  kill -0 "$web_pid" 2>/dev/null && break # else the port was taken in between: try another
  web_pid=
done
[ -n "$web_pid" ] || fail "php -S did not start: $(tail -3 "$tmp/web.log")"
url="http://127.0.0.1:$port"

cat >"$wp/wp-config.php" <<PHP
<?php
define( 'DB_NAME', 'wordpress' );
define( 'DB_USER', 'wordpress' );
define( 'DB_PASSWORD', '$db_password' );
define( 'DB_HOST', 'localhost:$sock' );
define( 'DB_CHARSET', 'utf8mb4' );
define( 'DB_COLLATE', '' );
define( 'AUTH_KEY', '$(rand 32)' );
define( 'SECURE_AUTH_KEY', '$(rand 32)' );
define( 'LOGGED_IN_KEY', '$(rand 32)' );
define( 'NONCE_KEY', '$(rand 32)' );
define( 'AUTH_SALT', '$(rand 32)' );
define( 'SECURE_AUTH_SALT', '$(rand 32)' );
define( 'LOGGED_IN_SALT', '$(rand 32)' );
define( 'NONCE_SALT', '$(rand 32)' );
define( 'WP_HOME', '$url' );
define( 'WP_SITEURL', '$url' );
define( 'WP_DEBUG', true );
define( 'WP_DEBUG_LOG', '$tmp/debug.log' );
define( 'WP_DEBUG_DISPLAY', false );
define( 'DISABLE_WP_CRON', true );
define( 'WP_HTTP_BLOCK_EXTERNAL', true ); // no update checks: the test needs no network
define( 'AUTOMATIC_UPDATER_DISABLED', true );
define( 'FS_METHOD', 'direct' );
\$table_prefix = 'wp_';
if ( ! defined( 'ABSPATH' ) ) {
	define( 'ABSPATH', __DIR__ . '/' );
}
require_once ABSPATH . 'wp-settings.php';
PHP

# wp runs one command inside WordPress with php-cli, as WP-CLI would.
cat >"$tmp/wp.php" <<'PHP'
<?php
// Usage: php wp.php <wordpress dir> <url> <command> [args...]
list( , $dir, $url, $cmd ) = $argv;
$args = array_slice( $argv, 4 );
$_SERVER['HTTP_HOST'] = parse_url( $url, PHP_URL_HOST ) . ':' . parse_url( $url, PHP_URL_PORT );
$_SERVER['SERVER_NAME'] = parse_url( $url, PHP_URL_HOST );
$_SERVER['REQUEST_URI'] = '/';
$_SERVER['SERVER_PROTOCOL'] = 'HTTP/1.1';
function fail( $msg ) { fwrite( STDERR, $msg . "\n" ); exit( 1 ); }
if ( 'install' === $cmd ) {
	define( 'WP_INSTALLING', true );
	function wp_new_blog_notification() {} // no mail
}
require $dir . '/wp-load.php';
require_once ABSPATH . 'wp-admin/includes/plugin.php';
$plugin = 'parley-chat/parley-chat.php';
switch ( $cmd ) {
	case 'install':
		require_once ABSPATH . 'wp-admin/includes/upgrade.php';
		$r = wp_install( 'Parley plugin test', 'admin', 'admin@example.com', true, '', $args[0] );
		if ( empty( $r['user_id'] ) ) fail( 'wp_install failed' );
		$editor = wp_insert_user( array( 'user_login' => 'editor', 'user_pass' => $args[0], 'user_email' => 'editor@example.com', 'role' => 'editor' ) );
		if ( is_wp_error( $editor ) ) fail( $editor->get_error_message() );
		break;
	case 'activate':
		$r = activate_plugin( $plugin );
		if ( is_wp_error( $r ) ) fail( 'activate_plugin: ' . $r->get_error_message() );
		if ( ! is_plugin_active( $plugin ) ) fail( 'the plugin is not active' );
		break;
	case 'headers': // what WordPress reads from the plugin header, checked against readme.txt
		$data = get_plugin_data( WP_PLUGIN_DIR . '/' . $plugin, false, false );
		$readme = file_get_contents( WP_PLUGIN_DIR . '/parley-chat/readme.txt' );
		if ( ! preg_match( '/^=== (.+) ===$/m', $readme, $m ) || $m[1] !== $data['Name'] ) fail( 'readme.txt title is not the plugin name' );
		foreach ( array( 'Stable tag' => 'Version', 'Requires at least' => 'RequiresWP', 'Requires PHP' => 'RequiresPHP' ) as $field => $key ) {
			if ( ! preg_match( '/^' . $field . ':\s*(\S+)\s*$/m', $readme, $m ) || $m[1] !== $data[ $key ] ) fail( "readme.txt $field does not match the plugin header $key ({$data[$key]})" );
		}
		foreach ( array( 'Contributors', 'Tags', 'Tested up to', 'License' ) as $field ) {
			if ( ! preg_match( '/^' . $field . ':\s*\S/m', $readme ) ) fail( "readme.txt has no $field" );
		}
		foreach ( array( 'Description', 'Installation', 'Frequently Asked Questions', 'Changelog' ) as $section ) {
			if ( false === strpos( $readme, "== $section ==" ) ) fail( "readme.txt has no == $section ==" );
		}
		if ( 'parley-chat' !== $data['TextDomain'] || '/languages' !== $data['DomainPath'] ) fail( 'text domain or domain path' );
		$extra = get_file_data( WP_PLUGIN_DIR . '/' . $plugin, array( 'License' => 'License' ) );
		if ( 'GPLv2 or later' !== $extra['License'] ) fail( 'plugin header License: ' . $extra['License'] );
		if ( version_compare( $GLOBALS['wp_version'], $data['RequiresWP'], '<' ) ) fail( 'WordPress is older than Requires at least' );
		break;
	case 'theme':
		switch_theme( $args[0] );
		if ( get_stylesheet() !== $args[0] || ! wp_get_theme()->exists() ) fail( "cannot switch to the theme $args[0]" );
		break;
	case 'settings':
		echo wp_json_encode( get_option( 'parley_chat_settings' ) );
		break;
	case 'uninstall':
		deactivate_plugins( $plugin );
		if ( is_plugin_active( $plugin ) ) fail( 'still active after deactivate_plugins' );
		if ( ! is_uninstallable_plugin( $plugin ) ) fail( 'WordPress does not see an uninstall.php' );
		uninstall_plugin( $plugin );
		wp_cache_flush();
		if ( false !== get_option( 'parley_chat_settings' ) ) fail( 'the settings are still there after uninstall' );
		break;
	default:
		fail( "unknown command $cmd" );
}
PHP
wpcli() { php -d display_errors=stderr "$tmp/wp.php" "$wp" "$url" "$@"; }
settings() { wpcli settings; }
# setting prints one field of the stored settings.
setting() { settings | php -r '$s = json_decode(stream_get_contents(STDIN), true); echo $s[$argv[1]] ?? "";' "$1"; }

say "installing WordPress with wp_install() at $url"
password="$(rand 16)"
wpcli install "$password" || fail "installing WordPress with wp_install()"

say "installing the plugin from the zip and activating it"
unzip -q "$zip" -d "$wp/wp-content/plugins"
wpcli activate || fail "activating the plugin"
wpcli headers || fail "the plugin header and readme.txt"

# HTTP. fetch [curl args] URL: the body in $tmp/body, the status in $code, the redirect target in $location.
jar="$tmp/admin.jar"
fetch() {
  local out
  out="$(curl -sS -o "$tmp/body" -w '%{http_code} %{redirect_url}' "$@")" || fail "curl $*"
  code="${out%% *}"
  location="${out#* }"
}
as_admin() { fetch -b "$jar" -c "$jar" "$@"; }
body() { cat "$tmp/body"; }
# occurrences prints how many times a string occurs in the last body.
occurrences() { { grep -oF -- "$1" "$tmp/body" || true; } | wc -l; }
# widget_tags prints every <script> start tag referring to widget.js in the last body.
widget_tags() { grep -oiE '<script[^>]*widget\.js[^>]*>' "$tmp/body" || true; }

login() { # login JAR USER
  fetch -b "$1" -c "$1" "$url/wp-login.php"
  fetch -b "$1" -c "$1" --data-urlencode "log=$2" --data-urlencode "pwd=$password" -d "wp-submit=Log+In" \
    --data-urlencode "redirect_to=$url/wp-admin/" -d testcookie=1 "$url/wp-login.php"
  [ "$code" = 302 ] && grep -q wordpress_logged_in_ "$1" || fail "logging in as $2 (HTTP $code)"
}

say "before the plugin is configured, pages carry no widget"
fetch "$url/"
[ "$code" = 200 ] || fail "GET / answered HTTP $code"
[ -z "$(widget_tags)" ] || fail "the widget is on the front page before the settings are saved"

login "$jar" admin

settings_url="$url/wp-admin/options-general.php?page=parley-chat"
# save posts the settings form as a browser does: the hidden fields (option_page, action, _wpnonce,
# _wp_http_referer) come from the form on the settings screen, then the redirect is followed. Fields are passed as
# name=value (name within parley_chat_settings[...]).
save() {
  as_admin "$settings_url"
  [ "$code" = 200 ] || fail "the settings screen answered HTTP $code"
  sed -n '/<form action="options.php"/,/<\/form>/p' "$tmp/body" >"$tmp/form"
  local hidden=() name field
  for name in option_page action _wpnonce _wp_http_referer; do
    field="$({ grep -oE "name=[\"']$name[\"'] value=[\"'][^\"']*[\"']" "$tmp/form" || true; } | head -1 | sed -E "s/.*value=[\"']([^\"']*)[\"']/\1/")"
    [ -n "$field" ] || fail "the settings form has no $name"
    hidden+=(--data-urlencode "$name=$(php -r 'echo html_entity_decode($argv[1], ENT_QUOTES);' "$field")")
  done
  local fields=()
  for field in "$@"; do fields+=(--data-urlencode "parley_chat_settings[${field%%=*}]=${field#*=}"); done
  as_admin "${hidden[@]}" "${fields[@]}" "$url/wp-admin/options.php"
  [ "$code" = 302 ] || fail "saving the settings answered HTTP $code: $(body | sed 's/<[^>]*>//g' | grep -m1 .)"
  case "$location" in *settings-updated=true*) ;; *) fail "saving redirected to $location" ;; esac
  as_admin "$location"
}
saved_ok() { grep -qE "id=[\"']setting-error-settings_updated[\"']" "$tmp/body" || fail "no \"Settings saved.\" after $1"; }
error_shown() { grep -qE "id=[\"']setting-error-$1[\"']" "$tmp/body" || fail "no $1 error on the settings screen"; }

say "the settings screen has the form"
as_admin "$settings_url"
[ "$code" = 200 ] || fail "GET the settings screen: HTTP $code"
for f in api_key merchant_id widget_url; do
  grep -q "name=\"parley_chat_settings\[$f\]\"" "$tmp/body" || fail "the settings form has no $f field"
done

key="pk_$(rand 4)_$(rand 21)"
mask="${key:0:7}••••••${key: -4}"
say "saving the settings through the form"
save "api_key=$key" merchant_id=Acme "widget_url=https://chat.example.com/"
saved_ok "a valid form"
want_settings="{\"api_key\":\"$key\",\"merchant_id\":\"acme\",\"widget_url\":\"https:\\/\\/chat.example.com\"}"
[ "$(settings)" = "$want_settings" ] || fail "stored settings: $(settings), want $want_settings"

# check_front URL WIDGET_URL: the page carries exactly the embed tag.
check_front() {
  local tag="<script src=\"$2/widget.js\" data-api-key=\"$key\" data-merchant-id=\"acme\" async></script>"
  fetch -L "$url$1"
  case "$code" in 200 | 404) ;; *) fail "GET $1 answered HTTP $code" ;; esac
  local n
  n="$(occurrences "$tag")"
  [ "$n" = 1 ] || fail "$1 carries the embed tag $n times, want once: $(widget_tags | head -3)"
  [ "$(widget_tags)" = "${tag%</script>}" ] || fail "$1 has other widget.js tags: $(widget_tags)"
  [ "$(occurrences 'data-api-key=')" = 1 ] || fail "$1 carries data-api-key more than once"
}
for theme in twentytwentythree twentytwentyone; do
  say "every front-end page carries exactly the embed tag, theme $theme"
  wpcli theme "$theme" || fail "switching to the theme $theme"
  for page in / "/?p=1" "/?page_id=2" "/?s=hello" "/?p=999999"; do check_front "$page" https://chat.example.com; done
done

say "admin pages and the login page do not"
for page in wp-admin/ wp-admin/options-general.php "wp-admin/options-general.php?page=parley-chat" \
  wp-admin/plugins.php wp-admin/profile.php "wp-admin/post.php?post=1&action=edit"; do
  as_admin "$url/$page"
  [ "$code" = 200 ] || fail "GET $page answered HTTP $code"
  [ -z "$(widget_tags)" ] || fail "the widget is on $page: $(widget_tags)"
  ! grep -qF "$key" "$tmp/body" || fail "$page shows the whole API key"
done
fetch "$url/wp-login.php"
[ -z "$(widget_tags)" ] || fail "the widget is on the login page"

say "the saved key is shown masked"
as_admin "$settings_url"
grep -qF "$mask" "$tmp/body" || fail "the settings screen does not show the key masked as $mask"
grep -qF 'name="parley_chat_settings[api_key]" value=""' "$tmp/body" || fail "the key field is not empty once saved"

say "a blank key field keeps the saved key"
save api_key= merchant_id=acme widget_url=https://chat.example.com
saved_ok "a blank key"
[ "$(setting api_key)" = "$key" ] || fail "a blank key field changed the key to '$(setting api_key)'"

say "a secret key is refused and stored nowhere"
secret="sk_$(rand 4)_$(rand 21)"
save "api_key=$secret" merchant_id=acme widget_url=https://chat.example.com
error_shown parley_chat_secret_key
! grep -qF "$secret" "$tmp/body" || fail "the settings screen repeats the secret key"
[ "$(setting api_key)" = "$key" ] || fail "the key changed to '$(setting api_key)' after a secret key was refused"
mariadb-dump --no-defaults --socket="$sock" -uroot wordpress >"$tmp/dump.sql" || fail "mariadb-dump"
! grep -qF "$secret" "$tmp/dump.sql" || fail "the secret key is in the database"
grep -qF "$mask" "$tmp/body" || fail "the settings screen does not show the saved key masked after the refusal"
check_front / https://chat.example.com

say "malformed keys, merchant IDs and widget URLs are refused"
save api_key=pk_short "merchant_id=Not A Label!" widget_url=http://chat.example.com
error_shown parley_chat_invalid_key
error_shown parley_chat_invalid_merchant_id
error_shown parley_chat_invalid_widget_url
[ "$(settings)" = "$want_settings" ] || fail "refused values were stored: $(settings)"
save "widget_url=javascript:alert(1)" merchant_id=acme
error_shown parley_chat_invalid_widget_url
save 'widget_url=https://chat.example.com/"><script>alert(1)</script>' merchant_id=acme
error_shown parley_chat_invalid_widget_url
[ "$(settings)" = "$want_settings" ] || fail "refused values were stored: $(settings)"

say "http is accepted for localhost; a pasted widget.js URL is trimmed"
save widget_url=http://localhost:8080/ merchant_id=acme
saved_ok "a localhost URL"
check_front / http://localhost:8080
save widget_url=https://cdn.example.com/parley/widget.js merchant_id=acme
saved_ok "a widget.js URL"
check_front / https://cdn.example.com/parley
save widget_url=https://chat.example.com merchant_id=acme

say "a form without a valid nonce changes nothing"
as_admin -d option_page=parley_chat -d action=update -d _wpnonce=0123456789 \
  -d "_wp_http_referer=/wp-admin/options-general.php?page=parley-chat" \
  --data-urlencode "parley_chat_settings[merchant_id]=forged" "$url/wp-admin/options.php"
[ "$code" = 403 ] || fail "a form with a bad nonce answered HTTP $code, want 403"
[ "$(settings)" = "$want_settings" ] || fail "a form with a bad nonce changed the settings: $(settings)"

say "an editor cannot see or change the settings"
editor_jar="$tmp/editor.jar"
login "$editor_jar" editor
fetch -b "$editor_jar" -c "$editor_jar" "$settings_url"
[ "$code" = 403 ] || fail "an editor got the settings screen (HTTP $code)"
fetch -b "$editor_jar" -c "$editor_jar" -d option_page=parley_chat -d action=update \
  --data-urlencode "parley_chat_settings[merchant_id]=editor" "$url/wp-admin/options.php"
[ "$code" = 403 ] || fail "an editor posting the settings got HTTP $code, want 403"
[ "$(settings)" = "$want_settings" ] || fail "an editor changed the settings: $(settings)"

say "an anonymous visitor cannot change the settings"
fetch -d option_page=parley_chat -d action=update --data-urlencode "parley_chat_settings[merchant_id]=anonymous" \
  "$url/wp-admin/options.php"
[ "$(settings)" = "$want_settings" ] || fail "an anonymous visitor changed the settings: $(settings)"

say "the plugin's files print nothing when requested directly"
for f in parley-chat.php uninstall.php; do
  fetch "$url/wp-content/plugins/parley-chat/$f"
  [ ! -s "$tmp/body" ] || fail "GET $f printed: $(head -c 200 "$tmp/body")"
done
[ "$(settings)" = "$want_settings" ] || fail "requesting uninstall.php changed the settings: $(settings)"

say "removing the key takes the widget off the site"
save clear_api_key=1 api_key= merchant_id=acme widget_url=https://chat.example.com
saved_ok "removing the key"
[ -z "$(setting api_key)" ] || fail "the key is still stored after removing it"
fetch "$url/"
[ -z "$(widget_tags)" ] || fail "the widget is on the front page without a key"
save "api_key=$key" merchant_id=acme widget_url=https://chat.example.com

say "uninstalling removes the settings"
wpcli uninstall || fail "uninstalling the plugin"
[ -z "$(sql -N wordpress -e "SELECT option_name FROM wp_options WHERE option_name LIKE '%parley%'")" ] ||
  fail "options left after uninstall: $(sql -N wordpress -e "SELECT option_name FROM wp_options WHERE option_name LIKE '%parley%'")"

say "the plugin logged no PHP error, warning or notice"
if cat "$tmp/debug.log" "$tmp/web.log" 2>/dev/null | grep -E 'PHP [A-Za-z ]+:' | grep -F '/plugins/parley-chat/' \
  >"$tmp/plugin-errors.log"; then
  cat "$tmp/plugin-errors.log" >&2
  fail "PHP reported problems in the plugin"
fi

say "PASS in $(($(date +%s) - started))s"
