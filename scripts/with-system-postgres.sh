#!/usr/bin/env bash
# Runs a command against a throw-away cluster of the machine's own PostgreSQL (Debian's
# packages), e.g. to test the engine on a second major version:
#   scripts/with-system-postgres.sh 15 npx vitest run packages/pgque
set -euo pipefail
major="$1"; shift
bin="/usr/lib/postgresql/${major}/bin"
[ -x "$bin/initdb" ] || { echo "PostgreSQL ${major} server binaries not found in $bin" >&2; exit 1; }

dir=$(mktemp -d /tmp/stega-pg${major}-XXXXXX)
chmod 0777 "$dir"
port=$(node -e "const s=require('net').createServer();s.listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})")
as_pg=()
[ "$(id -u)" = 0 ] && as_pg=(runuser -u postgres --)

cleanup() { "${as_pg[@]}" "$bin/pg_ctl" -D "$dir/data" -m immediate stop >/dev/null 2>&1 || true; rm -rf "$dir"; }
trap cleanup EXIT

"${as_pg[@]}" "$bin/initdb" -D "$dir/data" -U postgres --auth=trust >/dev/null
"${as_pg[@]}" "$bin/pg_ctl" -D "$dir/data" -l "$dir/log" -w \
  -o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c max_connections=300 -c fsync=off" start >/dev/null
echo "PostgreSQL ${major} on port ${port}"
DATABASE_URL="postgres://postgres@127.0.0.1:${port}/postgres" "$@"
