#!/bin/sh
# First start: an empty PGDATA gets a cluster owned by POSTGRES_USER (password POSTGRES_PASSWORD,
# scram) and the database POSTGRES_DB, reachable from the container network. Then PostgreSQL runs
# in the foreground as the postgres user.
set -eu
: "${POSTGRES_USER:=postgres}" "${POSTGRES_DB:=$POSTGRES_USER}"
[ -n "${POSTGRES_PASSWORD:-}" ] || { echo "postgres: POSTGRES_PASSWORD is not set" >&2; exit 1; }
mkdir -p "$PGDATA" /run/postgresql
chown -R postgres:postgres "$PGDATA" /run/postgresql
chmod 0700 "$PGDATA"
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  pwfile="$(mktemp)"
  printf '%s\n' "$POSTGRES_PASSWORD" >"$pwfile"
  chown postgres "$pwfile"
  setpriv --reuid=postgres --regid=postgres --init-groups initdb -D "$PGDATA" -U "$POSTGRES_USER" --pwfile="$pwfile" --auth-local=trust --auth-host=scram-sha-256 >/dev/null
  rm -f "$pwfile"
  echo "listen_addresses = '*'" >>"$PGDATA/postgresql.conf"
  echo "host all all all scram-sha-256" >>"$PGDATA/pg_hba.conf"
  setpriv --reuid=postgres --regid=postgres --init-groups pg_ctl -D "$PGDATA" -o "-c listen_addresses=''" -w start >/dev/null
  if [ "$POSTGRES_DB" != postgres ]; then
    setpriv --reuid=postgres --regid=postgres --init-groups psql -U "$POSTGRES_USER" -d postgres -v ON_ERROR_STOP=1 -q -c "CREATE DATABASE \"$POSTGRES_DB\""
  fi
  setpriv --reuid=postgres --regid=postgres --init-groups pg_ctl -D "$PGDATA" -m fast -w stop >/dev/null
  echo "postgres: initialized $PGDATA for $POSTGRES_USER/$POSTGRES_DB"
fi
exec setpriv --reuid=postgres --regid=postgres --init-groups postgres -D "$PGDATA"
