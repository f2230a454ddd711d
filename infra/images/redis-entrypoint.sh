#!/bin/sh
# As the official image: a `redis-server …` command runs as the redis user with protected mode off,
# so the other containers on the network may connect; anything else runs as given.
set -eu
chown -R redis:redis /data
if [ "${1:-}" = redis-server ]; then
  exec setpriv --reuid=redis --regid=redis --init-groups "$@" --protected-mode no
fi
exec "$@"
