#!/usr/bin/env bash
# Builds the installable WordPress plugin: a zip with the folder parley-chat/ at its root, as Plugins > Add New >
# Upload Plugin and the plugin directory expect.
#
#   hack/wordpress-plugin.sh [OUT]     builds OUT (default bin/parley-chat.zip) and prints its path
#   hack/wordpress-plugin.sh --pot     regenerates languages/parley-chat.pot from the source (needs xgettext)
#
# The zip is reproducible: files in a fixed order with a fixed timestamp. It uses zip when installed, else
# python3's zipfile module.
set -euo pipefail
cd "$(dirname "$0")/.."
src=integrations/wordpress/parley-chat

if [ "${1:-}" = --pot ]; then
  command -v xgettext >/dev/null || { echo "wordpress-plugin: xgettext is missing (apt-get install gettext)" >&2; exit 1; }
  version="$(sed -n 's/^ \* Version: *//p' "$src/parley-chat.php")"
  find "$src" -name '*.php' | LC_ALL=C sort | xgettext --from-code=UTF-8 --language=PHP --files-from=- \
    --output=- --omit-header --sort-by-file --add-comments=translators: \
    --keyword=__ --keyword=_e --keyword=esc_html__ --keyword=esc_html_e --keyword=esc_attr__ --keyword=esc_attr_e \
    --keyword=_x:1,2c --keyword=_n:1,2 --keyword=_nx:1,2,4c |
    sed "s#^\#: $src/#\#: #" >"$src/languages/.body.pot"
  {
    printf '# Copyright (C) Parley\n# This file is distributed under the same license as the Parley Chat plugin.\n'
    printf 'msgid ""\nmsgstr ""\n'
    printf '"Project-Id-Version: Parley Chat %s\\n"\n' "$version"
    printf '"Report-Msgid-Bugs-To: https://github.com/parley-dev/parley/issues\\n"\n'
    printf '"MIME-Version: 1.0\\n"\n"Content-Type: text/plain; charset=UTF-8\\n"\n"Content-Transfer-Encoding: 8bit\\n"\n'
    printf '"X-Domain: parley-chat\\n"\n\n'
    cat "$src/languages/.body.pot"
    # WordPress translates the plugin header's description with the text domain too.
    printf '\n#. Description of the plugin\nmsgid "%s"\nmsgstr ""\n' \
      "$(sed -n 's/^ \* Description: *//p' "$src/parley-chat.php" | sed 's/["\\]/\\&/g')"
  } >"$src/languages/parley-chat.pot"
  rm -f "$src/languages/.body.pot"
  echo "$src/languages/parley-chat.pot"
  exit 0
fi

out="${1:-bin/parley-chat.zip}"
mkdir -p "$(dirname "$out")"
out="$(cd "$(dirname "$out")" && pwd)/$(basename "$out")"
rm -f "$out"

stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
cp -R "$src" "$stage/parley-chat"
find "$stage/parley-chat" -name '.*' -exec rm -rf {} + # no editor or OS droppings
find "$stage/parley-chat" -type d -exec chmod 755 {} + -o -type f -exec chmod 644 {} +
find "$stage/parley-chat" -exec touch -h -d '2024-01-01 00:00:00 UTC' {} +

if command -v zip >/dev/null; then
  (cd "$stage" && find parley-chat | LC_ALL=C sort | TZ=UTC zip -q -X -@ "$out")
elif command -v python3 >/dev/null; then
  (cd "$stage" && python3 - "$out" <<'PY'
import os, sys, zipfile
names = []
for root, dirs, files in os.walk("parley-chat"):
    names.append(root + "/")
    names += [os.path.join(root, f) for f in files]
with zipfile.ZipFile(sys.argv[1], "w", zipfile.ZIP_DEFLATED) as z:
    for name in sorted(names):
        info = zipfile.ZipInfo(name, (2024, 1, 1, 0, 0, 0))
        if name.endswith("/"):
            info.external_attr = (0o40755 << 16) | 0x10
            z.writestr(info, b"")
        else:
            info.external_attr = 0o100644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            with open(name, "rb") as f:
                z.writestr(info, f.read())
PY
  ) || { echo "wordpress-plugin: python3 could not write $out" >&2; exit 1; }
else
  echo "wordpress-plugin: neither zip nor python3 is installed (apt-get install zip)" >&2
  exit 1
fi
echo "$out"
