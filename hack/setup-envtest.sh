#!/usr/bin/env bash
# Builds the envtest binaries (etcd and kube-apiserver) from the Go module proxy,
# because setup-envtest's downloads are not reachable here. Only missing binaries
# are built; they are cached outside the repository. Prints the directory to use
# as KUBEBUILDER_ASSETS:
#
#   KUBEBUILDER_ASSETS=$(hack/setup-envtest.sh) go test -tags integration ./...
set -euo pipefail

KUBE_VERSION="${ENVTEST_K8S_VERSION:-1.37.1}"
ETCD_VERSION="${ENVTEST_ETCD_VERSION:-3.6.16}"
cache_root="${PARLEY_ENVTEST_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/parley/envtest}"
dir="$cache_root/k8s-$KUBE_VERSION-etcd-$ETCD_VERSION"
mkdir -p "$dir"

log() { echo "setup-envtest: $*" >&2; }

build_etcd() {
  local work
  work=$(mktemp -d)
  trap 'rm -rf "$work"' RETURN
  log "building etcd v$ETCD_VERSION (about 2 minutes, once)"
  (
    cd "$work"
    go mod init envtest-etcd >/dev/null 2>&1
    go get "go.etcd.io/etcd/server/v3@v$ETCD_VERSION" >&2
    CGO_ENABLED=0 go build -o "$dir/etcd.tmp" go.etcd.io/etcd/server/v3 >&2
  )
  mv "$dir/etcd.tmp" "$dir/etcd"
}

build_kube_apiserver() {
  local work minor
  work=$(mktemp -d)
  trap 'rm -rf "$work"' RETURN
  minor=$(echo "$KUBE_VERSION" | cut -d. -f2)
  log "building kube-apiserver v$KUBE_VERSION (10 to 15 minutes on 2 cores, once)"
  (
    cd "$work"
    cat >go.mod <<MOD
module envtest-apiserver

go 1.26

require k8s.io/kubernetes v$KUBE_VERSION
MOD
    cat >tools.go <<'GO'
//go:build tools

package tools

import _ "k8s.io/kubernetes/cmd/kube-apiserver"
GO
    # k8s.io/kubernetes replaces its staging modules with local paths; point them at
    # the published k8s.io/* modules of the matching version instead.
    go mod download -json "k8s.io/kubernetes@v$KUBE_VERSION" >kube.json
    local kube_mod
    kube_mod=$(sed -n 's/.*"GoMod": "\(.*\)".*/\1/p' kube.json)
    grep -E '^\s*k8s.io/[^ ]+ => ./staging/src/k8s.io/' "$kube_mod" |
      awk -v v="0.$minor.${KUBE_VERSION##*.}" '{print "replace " $1 " => " $1 " v" v}' >>go.mod
    GOFLAGS=-mod=mod go mod tidy >&2
    CGO_ENABLED=0 go build -o "$dir/kube-apiserver.tmp" \
      -ldflags "-X k8s.io/component-base/version.gitVersion=v$KUBE_VERSION -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor" \
      k8s.io/kubernetes/cmd/kube-apiserver >&2
  )
  mv "$dir/kube-apiserver.tmp" "$dir/kube-apiserver"
}

# Two test runs starting at once would build into the same files: the second waits.
exec 9>"$dir/.lock"
flock 9
[ -x "$dir/etcd" ] || build_etcd
[ -x "$dir/kube-apiserver" ] || build_kube_apiserver
echo "$dir"
