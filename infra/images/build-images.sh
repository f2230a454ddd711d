#!/usr/bin/env bash
# Builds the four images (hub, web, agent, targets) with podman from the repository, on the Node.js
# base images infra/images/build-base.sh makes (built first when missing), and prints their sizes:
#
#   infra/images/build-images.sh [tag]     # → localhost/volley/{hub,web,agent,targets}:<tag> (default: local)
#
# Each Dockerfile is built with its own ignore file (<Dockerfile>.dockerignore), as docker does.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
TAG="${1:-local}"
export CONTAINERS_CONF="${CONTAINERS_CONF:-$here/containers.conf}"
NODE_VERSION="$(node -p process.versions.node)"
BASE_TAG="${VOLLEY_BASE_TAG:-$NODE_VERSION}"
NODE_IMAGE="${NODE_IMAGE:-localhost/volley-node:$BASE_TAG}"
NODE_RUNTIME_IMAGE="${NODE_RUNTIME_IMAGE:-localhost/volley-node-runtime:$BASE_TAG}"

if ! podman image exists "$NODE_IMAGE" || ! podman image exists "$NODE_RUNTIME_IMAGE"; then
  "$here/build-base.sh"
fi

for app in hub web agent targets; do
  started=$SECONDS
  printf 'build-images: building volley/%s:%s…\n' "$app" "$TAG"
  podman build --quiet --layers --format docker \
    --file "$repo/infra/docker/$app.Dockerfile" \
    --ignorefile "$repo/infra/docker/$app.Dockerfile.dockerignore" \
    --build-arg "NODE_IMAGE=$NODE_IMAGE" \
    --build-arg "NODE_RUNTIME_IMAGE=$NODE_RUNTIME_IMAGE" \
    --tag "localhost/volley/$app:$TAG" \
    "$repo" >/dev/null
  size="$(podman image inspect --format '{{.Size}}' "localhost/volley/$app:$TAG")"
  printf 'build-images: volley/%s:%s %s MB (%d s)\n' "$app" "$TAG" "$((size / 1000000))" "$((SECONDS - started))"
done
