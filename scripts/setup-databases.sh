#!/usr/bin/env bash
# The state databases the lease, outage and race tests run on: PostgreSQL and MariaDB, on
# 127.0.0.1 at their default ports, as tests/conftest.py assumes:
#   postgresql://postgres@127.0.0.1:5432/test   (trust authentication from 127.0.0.1 only)
#   mysql://root@127.0.0.1:3306/test            (root over TCP from 127.0.0.1, no password)
# Installs them from Debian when missing (as root, with apt), configures that, and starts
# them (`start`: only start them, as .ci/run does before the tests). Quiet and idempotent
# when all is in place. The tests create and drop a database of their own per run; `test`
# is only where they connect to do it.
#
#   scripts/setup-databases.sh [setup|start]
set -euo pipefail

mode=${1:-setup}
MARIADBD=/usr/sbin/mariadbd
PG_JDBC=/usr/share/java/postgresql.jar

say() { echo "databases: $*" >&2; }

wait_for() {  # wait_for WHAT COMMAND...: up to 60 s
  local what=$1; shift
  for _ in $(seq 1 120); do "$@" >/dev/null 2>&1 && return 0; sleep 0.5; done
  say "$what did not come up within 60 s"; return 1
}

pg_version() { ls /usr/lib/postgresql 2>/dev/null | sort -V | tail -n1; }

install_missing() {
  local missing=()
  [ -n "$(pg_version)" ] && command -v pg_ctlcluster >/dev/null 2>&1 || missing+=(postgresql)
  [ -x "$MARIADBD" ] || missing+=(mariadb-server)
  # PostgreSQL's JDBC driver: Spark's JDBC catalog on a PostgreSQL catalog database
  # (tests/test_secrets.py; users name it in `spark.jars`)
  [ -f "$PG_JDBC" ] || missing+=(libpostgresql-jdbc-java)
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    say "please install ${missing[*]} (the lease tests run on both), then run make again"; exit 1
  fi
  say "installing ${missing[*]} with apt-get"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  # No service starts at install time (there is no init here); this script starts them.
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null 2>&1 || {
    say "apt-get install ${missing[*]} failed"; exit 1; }
}

pg_cluster() {  # the first cluster of the newest version, created when there is none
  local version; version=$(pg_version)
  if [ ! -d "/etc/postgresql/$version/main" ]; then
    say "creating PostgreSQL $version cluster main"
    pg_createcluster "$version" main >/dev/null
  fi
  echo "$version"
}

configure_pg_hba() {  # trust on 127.0.0.1 first, so it wins over the packaged scram lines
  local hba=$1 line="host all all 127.0.0.1/32 trust  # icemaint tests (scripts/setup-databases.sh)"
  grep -qF "icemaint tests" "$hba" && return 0
  { echo "$line"; cat "$hba"; } > "$hba.icemaint" && cat "$hba.icemaint" > "$hba" && rm -f "$hba.icemaint"
  return 1  # changed: reload
}

start_postgres() {
  local version; version=$(pg_cluster)
  pg_isready -h 127.0.0.1 -p 5432 -q 2>/dev/null && { echo "$version"; return 0; }
  say "starting PostgreSQL $version"
  pg_ctlcluster --skip-systemctl-redirect "$version" main start >/dev/null 2>&1 || true
  wait_for "PostgreSQL" pg_isready -h 127.0.0.1 -p 5432 -q
  echo "$version"
}

start_mariadb() {
  mysqladmin -uroot -h127.0.0.1 ping >/dev/null 2>&1 && return 0
  mysqladmin --protocol=socket -uroot ping >/dev/null 2>&1 && return 0
  say "starting MariaDB"
  install -d -o mysql -g mysql /run/mysqld
  [ -d /var/lib/mysql/mysql ] || mariadb-install-db --user=mysql --datadir=/var/lib/mysql >/dev/null 2>&1
  start-stop-daemon --start --oknodo --background --chuid mysql --exec "$MARIADBD" -- --user=mysql >/dev/null
  wait_for "MariaDB" mysqladmin --protocol=socket -uroot ping
}

setup_postgres() {
  local version hba
  version=$(start_postgres)
  hba="/etc/postgresql/$version/main/pg_hba.conf"
  if ! configure_pg_hba "$hba"; then
    pg_ctlcluster --skip-systemctl-redirect "$version" main reload >/dev/null
    sleep 1
  fi
  psql -h 127.0.0.1 -U postgres -d postgres -tAc "SELECT 1 FROM pg_database WHERE datname = 'test'" | grep -q 1 \
    || psql -h 127.0.0.1 -U postgres -d postgres -qc "CREATE DATABASE test"
}

setup_mariadb() {
  start_mariadb
  mysql -uroot -h127.0.0.1 -e "SELECT 1" >/dev/null 2>&1 && mysql -uroot -h127.0.0.1 -e "CREATE DATABASE IF NOT EXISTS test" && return 0
  # Debian's root@localhost authenticates by the Unix socket only: add root from 127.0.0.1.
  mysql --protocol=socket -uroot -e "
    CREATE USER IF NOT EXISTS 'root'@'127.0.0.1' IDENTIFIED BY '';
    GRANT ALL PRIVILEGES ON *.* TO 'root'@'127.0.0.1' WITH GRANT OPTION;
    ALTER USER 'root'@'localhost' IDENTIFIED VIA unix_socket OR mysql_native_password USING PASSWORD('');
    CREATE DATABASE IF NOT EXISTS test;
    FLUSH PRIVILEGES;"
  mysql -uroot -h127.0.0.1 -e "SELECT 1" >/dev/null
}

case $mode in
  setup) install_missing; setup_postgres; setup_mariadb ;;
  start) start_postgres >/dev/null; start_mariadb ;;
  *) say "usage: $0 [setup|start]"; exit 2 ;;
esac
