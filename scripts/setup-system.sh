#!/usr/bin/env bash
# System packages icemaint needs besides Python: a Java 17+ runtime for Spark, a JDK's
# javac for the readers' scan reporter (`make reporter`) and the SQLite JDBC driver for the
# embedded catalog. Installs them with apt on Debian/Ubuntu as
# root; elsewhere says in one line what to install. Quiet when all is there already.
set -euo pipefail

SQLITE_JDBC=/usr/share/java/sqlite-jdbc.jar
missing=()

java_major() {
  command -v java >/dev/null 2>&1 || { echo 0; return; }
  java -version 2>&1 | awk -F'"' '/version/ {split($2, v, "."); print (v[1] == "1" ? v[2] : v[1]); exit}'
}

[ "$(java_major)" -ge 17 ] 2>/dev/null || missing+=(openjdk-17-jre-headless)
command -v javac >/dev/null 2>&1 || missing+=(openjdk-17-jdk-headless)
[ -f "$SQLITE_JDBC" ] || missing+=(libxerial-sqlite-jdbc-java)
command -v python3 >/dev/null 2>&1 || missing+=(python3)
python3 -c 'import venv, ensurepip' >/dev/null 2>&1 || missing+=(python3-venv)

[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "setup: installing ${missing[*]} with apt-get" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  # The JRE's postinst wants this folder, which slim images delete.
  mkdir -p /usr/share/man/man1
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  exit 0
fi

echo "setup: please install ${missing[*]} (Java 17+ runtime, a JDK's javac and the xerial SQLite JDBC jar at $SQLITE_JDBC), then run make again" >&2
exit 1
