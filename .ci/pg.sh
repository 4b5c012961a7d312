# shellcheck shell=bash
# Sourced by .ci/run: pg_start brings up a throwaway PostgreSQL cluster on a
# free loopback port and exports REWIND_TEST_POSTGRES; pg_stop tears it down.
# pg_stop is safe to call twice and from an EXIT trap.
#
#   source .ci/pg.sh
#   trap pg_stop EXIT
#   pg_start || exit 1
#
# The cluster commits without waiting for its WAL flush
# (synchronous_commit=off): no test stops PostgreSQL itself (their kills
# are rewind's processes), a commit is seen by every session at once all
# the same, and a commit's wait was most of a put's time (0.4 against
# 0.8-1.0 ms; fenced 0.3 against 1-4 ms, BenchmarkStore at load 9). To
# measure PostgreSQL figures as a user's server runs, start it with
# PG_SYNC_COMMIT=on PG_FSYNC=on.
#
# Nor does it fsync (fsync=off): nothing outlives the cluster, and no test
# crashes the server or the machine under it. A checkpoint's fsyncs were
# ~15% of the server's CPU in the store's tests (47 against 39 s, two runs
# each of store/postgres's race binary), and every DROP DATABASE waits for
# a checkpoint.

PG_DIR=${PG_DIR:-}
PG_BIN=${PG_BIN:-}

_pg_say() { echo "pg.sh: $*" >&2; }

# _pg_find_bin sets PG_BIN to the newest /usr/lib/postgresql/*/bin.
_pg_find_bin() {
	PG_BIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
	[ -n "$PG_BIN" ] && [ -x "$PG_BIN/initdb" ] && [ -x "$PG_BIN/pg_ctl" ]
}

# _pg_free_port prints a loopback TCP port that nothing listens on.
_pg_free_port() {
	if command -v python3 >/dev/null 2>&1 &&
		python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])' 2>/dev/null; then
		return 0
	fi
	local p
	for p in $(seq 54320 54420); do
		# A refused connection means the port is free.
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
			echo "$p"
			return 0
		fi
	done
	return 1
}

# _pg_base prints where the cluster's files go: PG_BASE if set, else
# /dev/shm when it is a tmpfs with 1 GiB free, else /tmp. The tests make
# and drop a database a test (~290 files each, ~21,000 files in
# store/postgres's run alone); on ext4 creating files after so many were
# deleted was 19% of the server's CPU (ext4_create's search for an inode
# not recently deleted), and the cluster is thrown away anyway.
_pg_base() {
	if [ -n "${PG_BASE:-}" ]; then
		echo "$PG_BASE"
		return 0
	fi
	local fs free
	fs=$(stat -f -c %T /dev/shm 2>/dev/null) || fs=
	free=$(df -Pk /dev/shm 2>/dev/null | awk 'NR == 2 { print $4 }') || free=
	if [ "$fs" = tmpfs ] && [ -w /dev/shm ] && [ "${free:-0}" -ge 1048576 ]; then
		echo /dev/shm
	else
		echo /tmp
	fi
}

pg_start() {
	if [ -n "$PG_DIR" ] && [ -d "$PG_DIR" ]; then
		_pg_say "already started in $PG_DIR"
		return 0
	fi
	if ! _pg_find_bin; then
		if [ "$(id -u)" != 0 ]; then
			_pg_say "PostgreSQL is not installed (no /usr/lib/postgresql/*/bin) and we are not root: install the 'postgresql' package"
			return 1
		fi
		_pg_say "installing PostgreSQL with apt-get"
		# The package's own cluster is not used; only its binaries.
		if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null; }; then
			_pg_say "apt-get install postgresql failed"
			return 1
		fi
		if ! _pg_find_bin; then
			_pg_say "postgresql installed but no initdb/pg_ctl under /usr/lib/postgresql/*/bin"
			return 1
		fi
	fi
	if ! id -u postgres >/dev/null 2>&1; then
		# initdb and pg_ctl refuse to run as root.
		useradd --system --no-create-home --shell /bin/sh postgres || {
			_pg_say "cannot create user postgres"
			return 1
		}
	fi

	local dir
	dir=$(mktemp -d "$(_pg_base)/rewind-pg.XXXXXX") || return 1
	chown postgres: "$dir" && chmod 700 "$dir" || return 1
	PG_DIR=$dir
	if ! runuser -u postgres -- "$PG_BIN/initdb" -D "$dir" -U postgres --auth=trust -E UTF8 --no-locale >"$dir.initdb.log" 2>&1; then
		_pg_say "initdb failed:"
		cat "$dir.initdb.log" >&2
		rm -f "$dir.initdb.log"
		pg_stop
		return 1
	fi
	rm -f "$dir.initdb.log"
	# Everyone is trusted except one role, so that the store's tests can see
	# a real server refuse a wrong password.
	{ echo "host all rewind_password_test 127.0.0.1/32 scram-sha-256"; cat "$dir/pg_hba.conf"; } >"$dir/pg_hba.conf.new" &&
		cat "$dir/pg_hba.conf.new" >"$dir/pg_hba.conf" && rm -f "$dir/pg_hba.conf.new"

	# The port can be taken between picking and binding: try a few.
	local port try
	for try in 1 2 3 4 5; do
		port=$(_pg_free_port) || {
			_pg_say "no free loopback port"
			pg_stop
			return 1
		}
		if runuser -u postgres -- "$PG_BIN/pg_ctl" -D "$dir" -l "$dir/log" -w -t 60 \
			-o "-c listen_addresses=127.0.0.1 -p $port -k $dir -c fsync=${PG_FSYNC:-off} -c synchronous_commit=${PG_SYNC_COMMIT:-off}" start >/dev/null; then
			export REWIND_TEST_POSTGRES="postgres://postgres@127.0.0.1:$port/postgres?sslmode=disable"
			_pg_say "PostgreSQL $("$PG_BIN/postgres" --version | awk '{print $3}') up at $REWIND_TEST_POSTGRES (data $dir)"
			return 0
		fi
		_pg_say "start on port $port failed (try $try):"
		tail -n 5 "$dir/log" >&2 || true
	done
	pg_stop
	return 1
}

pg_stop() {
	local dir=$PG_DIR
	PG_DIR=
	unset REWIND_TEST_POSTGRES
	[ -n "$dir" ] && [ -d "$dir" ] || return 0
	if [ -f "$dir/postmaster.pid" ] && [ -n "$PG_BIN" ]; then
		runuser -u postgres -- "$PG_BIN/pg_ctl" -D "$dir" -m fast -w stop >/dev/null 2>&1 ||
			runuser -u postgres -- "$PG_BIN/pg_ctl" -D "$dir" -m immediate -w stop >/dev/null 2>&1 ||
			_pg_say "pg_ctl stop failed for $dir"
	fi
	rm -rf "$dir"
	return 0
}
