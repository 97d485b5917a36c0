#!/usr/bin/env bash
# A throwaway PostgreSQL server for tests and CI, living entirely in one directory.
#
#   scripts/test-postgres.sh start <dir>   initdb into <dir>/data, start on a free 127.0.0.1 port, create the
#                                          `switchboard` role and database; prints on stdout:
#                                            TEST_DATABASE_URL=postgres://switchboard:<pw>@127.0.0.1:<port>/switchboard
#                                            TEST_DATABASE_ADMIN_URL=postgres://postgres:<pw>@127.0.0.1:<port>/postgres
#   scripts/test-postgres.sh stop <dir>    stops that server and removes <dir>
#
# Both roles log in over TCP with a random password (scram-sha-256); only the unix socket in <dir> (mode 0700,
# so only the server's user and root) is `trust`, for the set-up itself. The server never runs as root: when
# called as root it runs as the `postgres` system user (or `nobody`). Durability is off (fsync=off and friends):
# the data is thrown away. Two servers in two directories run side by side.
set -euo pipefail

die() {
  echo "test-postgres: $*" >&2
  exit 1
}

usage() {
  echo "usage: $0 start|stop <dir>" >&2
  exit 2
}

[[ $# -eq 2 ]] || usage
command=$1
dir=$2
[[ -n $dir && $dir != "/" ]] || die "refusing to use '$dir' as the server directory"
MARKER=".switchboard-test-postgres"

find_bin() {
  local initdb
  if initdb=$(command -v initdb 2>/dev/null); then
    dirname "$(readlink -f "$initdb")"
    return
  fi
  local candidate
  for candidate in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
    if [[ -x $candidate/initdb ]]; then
      echo "$candidate"
      return
    fi
  done
  return 1
}

# Runs a command as the unprivileged server user when we are root; as ourselves otherwise.
as_server_user() {
  if [[ $(id -u) -eq 0 ]]; then
    runuser -u "$server_user" -- "$@"
  else
    "$@"
  fi
}

random_secret() {
  od -An -tx1 -N16 /dev/urandom | tr -d ' \n'
}

# A port nothing listens on now; start() retries with another if the server still cannot bind it (a race with
# another process).
pick_port() {
  local port
  for _ in $(seq 1 50); do
    port=$((20000 + RANDOM % 40000))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      echo "$port"
      return
    fi
  done
  return 1
}

start() {
  bin=$(find_bin) || die "PostgreSQL is not installed (apt-get install -y postgresql)"
  [[ -x $bin/pg_ctl && -x $bin/psql ]] || die "PostgreSQL is incomplete in $bin (pg_ctl or psql missing; apt-get install -y postgresql)"

  server_user=$(id -un)
  if [[ $(id -u) -eq 0 ]]; then
    if id postgres >/dev/null 2>&1; then server_user=postgres; else server_user=nobody; fi
  fi

  [[ ! -e $dir/data ]] || die "$dir/data exists already; stop that server first or pick another directory"
  mkdir -p "$dir"
  dir=$(cd "$dir" && pwd)
  touch "$dir/$MARKER"
  if [[ $(id -u) -eq 0 ]]; then chown "$server_user" "$dir" "$dir/$MARKER"; fi
  chmod 0700 "$dir"
  as_server_user test -w "$dir" || die "$server_user cannot write to $dir (is a parent directory private to root?)"

  local admin_password app_password
  admin_password=$(random_secret)
  app_password=$(random_secret)
  # The password file is read by initdb as the server user, then removed.
  (umask 077 && printf '%s\n' "$admin_password" >"$dir/pwfile")
  if [[ $(id -u) -eq 0 ]]; then chown "$server_user" "$dir/pwfile"; fi
  as_server_user "$bin/initdb" -D "$dir/data" -U postgres --pwfile="$dir/pwfile" -A scram-sha-256 \
    -E UTF8 --locale=C -N >"$dir/initdb.log" 2>&1 || {
    cat "$dir/initdb.log" >&2
    die "initdb failed (log above)"
  }
  rm -f "$dir/pwfile"

  cat >"$dir/data/pg_hba.conf" <<EOF
local all all trust
host all all 127.0.0.1/32 scram-sha-256
EOF
  cat >>"$dir/data/postgresql.conf" <<EOF

# test-postgres.sh: a throwaway server
listen_addresses = '127.0.0.1'
unix_socket_directories = '$dir'
max_connections = 300
fsync = off
synchronous_commit = off
full_page_writes = off
wal_level = minimal
max_wal_senders = 0
checkpoint_timeout = 30min
max_wal_size = 4GB
shared_buffers = 64MB
log_min_messages = warning
EOF

  local port attempt started=""
  for attempt in 1 2 3 4 5; do
    port=$(pick_port) || die "no free TCP port found on 127.0.0.1"
    sed -i '/^port = /d' "$dir/data/postgresql.conf"
    echo "port = $port" >>"$dir/data/postgresql.conf"
    if as_server_user "$bin/pg_ctl" -D "$dir/data" -l "$dir/postgres.log" -w -t 60 start >/dev/null 2>&1; then
      started=yes
      break
    fi
    grep -q "could not bind\|could not create listen socket\|Address already in use" "$dir/postgres.log" 2>/dev/null || break
    echo "test-postgres: port $port was taken, trying another (attempt $attempt)" >&2
  done
  if [[ -z $started ]]; then
    tail -n 20 "$dir/postgres.log" >&2 2>/dev/null || true
    die "the server did not start (log: $dir/postgres.log)"
  fi

  "$bin/psql" -X -q -h "$dir" -p "$port" -U postgres -d postgres -v ON_ERROR_STOP=1 >/dev/null <<EOF || die "could not create the switchboard role and database"
CREATE ROLE switchboard LOGIN PASSWORD '$app_password' NOSUPERUSER NOCREATEDB NOCREATEROLE;
CREATE DATABASE switchboard OWNER switchboard STRATEGY FILE_COPY;
EOF

  echo "TEST_DATABASE_URL=postgres://switchboard:$app_password@127.0.0.1:$port/switchboard"
  echo "TEST_DATABASE_ADMIN_URL=postgres://postgres:$admin_password@127.0.0.1:$port/postgres"
}

stop() {
  [[ -e $dir ]] || return 0
  [[ -e $dir/$MARKER ]] || die "$dir was not made by $0 start; not removing it"
  if [[ -e $dir/data/postmaster.pid ]]; then
    local bin
    bin=$(find_bin) || die "PostgreSQL is not installed (apt-get install -y postgresql)"
    server_user=$(stat -c %U "$dir/data")
    as_server_user "$bin/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1 || true
  fi
  rm -rf "$dir"
}

case $command in
  start) start ;;
  stop) stop ;;
  *) usage ;;
esac
