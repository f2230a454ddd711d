#!/usr/bin/env bash
# Builds the Node.js base images the Dockerfiles take as NODE_IMAGE and NODE_RUNTIME_IMAGE, for
# machines that cannot pull public images (no registry but Debian's and npm's):
#
#   infra/images/build-base.sh            # → localhost/volley-node:<node version> and volley-node-runtime:<node version>
#
# Both are Debian bookworm (debootstrap --variant=minbase) plus this machine's node, and its CA bundle
# (NODE_EXTRA_CA_CERTS; npm's cafile), through which the registries are reached. NODE_IMAGE also has
# this machine's npm, for the build stages; NODE_RUNTIME_IMAGE has no npm, apt, dpkg or perl, and no
# docs or locales: what the final stages run on. Both have the user `node` (1000:1000), as the
# official images do. Needs root, debootstrap and podman; DEBIAN_MIRROR picks the mirror.
set -euo pipefail

MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
WORK="${VOLLEY_BASE_WORK:-/var/tmp/volley-base}"
CA_BUNDLE="${CA_BUNDLE:-/etc/ssl/certs/ca-certificates.crt}"
here="$(cd "$(dirname "$0")" && pwd)"
export CONTAINERS_CONF="${CONTAINERS_CONF:-$here/containers.conf}"

die() {
  printf 'build-base: error: %s\n' "$*" >&2
  exit 1
}
say() { printf 'build-base: %s\n' "$*"; }

[[ "$(id -u)" == 0 ]] || die "run it as root (debootstrap and podman import need it)"
command -v debootstrap >/dev/null || die "debootstrap is missing: apt-get install -y debootstrap"
command -v podman >/dev/null || die "podman is missing: apt-get install -y podman"
NODE_BIN="$(readlink -f "$(command -v node)")" || die "node is not on PATH"
NPM_DIR="$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")"
[[ -f "$NPM_DIR/package.json" ]] || die "cannot find npm's own directory (looked at $NPM_DIR)"
[[ -f "$CA_BUNDLE" ]] || die "no CA bundle at $CA_BUNDLE (apt-get install -y ca-certificates, or set CA_BUNDLE)"
NODE_VERSION="$("$NODE_BIN" -p process.versions.node)"
TAG="${VOLLEY_BASE_TAG:-$NODE_VERSION}"

rootfs="$WORK/rootfs"
if [[ ! -x "$rootfs/bin/sh" ]]; then
  say "debootstrap bookworm (minbase) from $MIRROR into $rootfs…"
  rm -rf "$rootfs"
  mkdir -p "$WORK"
  debootstrap --variant=minbase bookworm "$rootfs" "$MIRROR" >"$WORK/debootstrap.log" 2>&1 ||
    die "debootstrap failed; see $WORK/debootstrap.log"
fi

# One tree per image: a copy of the Debian root with node (and for NODE_IMAGE npm) added.
make_tree() {
  local dir="$1" with_npm="$2"
  rm -rf "$dir"
  cp -a "$rootfs" "$dir"
  install -m 0755 "$NODE_BIN" "$dir/usr/local/bin/node"
  mkdir -p "$dir/etc/ssl/certs"
  cp "$CA_BUNDLE" "$dir/etc/ssl/certs/ca-certificates.crt"
  grep -q '^node:' "$dir/etc/group" || echo 'node:x:1000:' >>"$dir/etc/group"
  grep -q '^node:' "$dir/etc/passwd" || echo 'node:x:1000:1000::/home/node:/bin/sh' >>"$dir/etc/passwd"
  mkdir -p "$dir/home/node"
  chown 1000:1000 "$dir/home/node"
  if [[ "$with_npm" == 1 ]]; then
    mkdir -p "$dir/usr/local/lib/node_modules"
    cp -a "$NPM_DIR" "$dir/usr/local/lib/node_modules/npm"
    ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$dir/usr/local/bin/npm"
    ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$dir/usr/local/bin/npx"
    mkdir -p "$dir/usr/local/etc"
    echo "cafile=/etc/ssl/certs/ca-certificates.crt" >"$dir/usr/local/etc/npmrc"
  fi
  # Nothing at run time reads these; apt's lists and cache are refetched by whoever installs more.
  rm -rf "$dir"/usr/share/{doc,man,info,locale,lintian} "$dir"/var/cache/apt/* "$dir"/var/lib/apt/lists/* "$dir"/var/log/*
  if [[ "$with_npm" == 0 ]]; then
    # The runtime image installs nothing: no package tools, no perl, no charset converters.
    rm -rf "$dir"/usr/bin/{apt,apt-get,apt-cache,apt-config,apt-key,apt-mark,dpkg,dpkg-*,perl*} \
      "$dir"/usr/lib/apt "$dir"/usr/lib/dpkg "$dir"/var/lib/dpkg "$dir"/usr/share/perl* \
      "$dir"/usr/lib/x86_64-linux-gnu/{perl-base,gconv,libapt-*} "$dir"/usr/share/{zoneinfo,common-licenses,i18n} \
      "$dir"/etc/apt
  fi
}

import_tree() {
  local dir="$1" name="$2"
  tar -C "$dir" -c . | podman import --quiet \
    --change 'ENV PATH=/usr/local/bin:/usr/local/sbin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt' \
    --change "ENV NODE_VERSION=$NODE_VERSION" \
    --change 'CMD ["node"]' \
    - "$name" >/dev/null
  say "$name: $(podman image inspect --format '{{.Size}}' "$name" | awk '{ printf "%.0f MB", $1 / 1e6 }')"
}

make_tree "$WORK/node" 1
import_tree "$WORK/node" "localhost/volley-node:$TAG"
make_tree "$WORK/runtime" 0
import_tree "$WORK/runtime" "localhost/volley-node-runtime:$TAG"
rm -rf "$WORK/node" "$WORK/runtime"
say "done: build with --build-arg NODE_IMAGE=localhost/volley-node:$TAG --build-arg NODE_RUNTIME_IMAGE=localhost/volley-node-runtime:$TAG"
