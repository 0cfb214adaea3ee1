#!/usr/bin/env bash
# Install (if missing) and start the services the test suite needs: PostgreSQL, Redis, Chromium (and pdflatex).
# Sourced by scripts/test; exports DATABASE_URL, REDIS_URL and CHROMIUM_PATH for the tests, and sets
# STARTED_SERVICES to what it started itself ("postgresql", "redis"), for scripts/test to stop at the end.
set -euo pipefail
STARTED_SERVICES=()

need=()
command -v pg_ctlcluster >/dev/null 2>&1 || need+=(postgresql)
command -v redis-server >/dev/null 2>&1 || need+=(redis-server)
[ -x /usr/bin/chromium ] || need+=(chromium)
if [ ${#need[@]} -gt 0 ]; then
  echo "Installing ${need[*]} from Debian's packages..."
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}" >/dev/null
fi
# pdflatex and booktabs, so the tests compile the LaTeX tables the app exports (nothing else of TeX Live).
if ! command -v pdflatex >/dev/null 2>&1 || ! kpsewhich booktabs.sty >/dev/null 2>&1; then
  echo "Installing texlive-latex-base texlive-latex-recommended from Debian's packages..."
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
    texlive-latex-base texlive-latex-recommended >/dev/null
fi

# PostgreSQL: the Debian cluster, started if it is not running; a role and database for the tests.
PG_VERSION=$(ls /etc/postgresql 2>/dev/null | sort -V | tail -n 1)
if [ -z "$PG_VERSION" ]; then echo "No PostgreSQL cluster found under /etc/postgresql" >&2; exit 1; fi
if ! pg_lsclusters -h | awk '{print $4}' | grep -q online; then
  pg_ctlcluster "$PG_VERSION" main start
  STARTED_SERVICES+=(postgresql)
fi
for _ in $(seq 1 30); do pg_isready -q -h 127.0.0.1 && break; sleep 1; done
PGUSER_NAME=${PGUSER_NAME:-hume}
PGPASS=${PGPASS:-hume}
su postgres -c "psql -qtc \"SELECT 1 FROM pg_roles WHERE rolname='$PGUSER_NAME'\"" | grep -q 1 \
  || su postgres -c "psql -qc \"CREATE ROLE $PGUSER_NAME LOGIN SUPERUSER PASSWORD '$PGPASS'\""
su postgres -c "psql -qc \"ALTER SYSTEM SET max_connections = 300\"" >/dev/null
if [ "$(su postgres -c "psql -qtAc 'SHOW max_connections'")" != "300" ]; then
  pg_ctlcluster "$PG_VERSION" main restart
  for _ in $(seq 1 30); do pg_isready -q -h 127.0.0.1 && break; sleep 1; done
fi
PGDB=${PGDB:-hume}
su postgres -c "psql -qtc \"SELECT 1 FROM pg_database WHERE datname='$PGDB'\"" | grep -q 1 \
  || su postgres -c "createdb -O $PGUSER_NAME $PGDB"
export DATABASE_URL=${DATABASE_URL:-postgres://$PGUSER_NAME:$PGPASS@127.0.0.1:5432/$PGDB}

# Redis on its own port, so it never collides with a system instance.
REDIS_PORT=${REDIS_PORT:-6390}
if ! redis-cli -p "$REDIS_PORT" ping >/dev/null 2>&1; then
  redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save "" --appendonly no --daemonize yes >/dev/null
  STARTED_SERVICES+=(redis)
  for _ in $(seq 1 30); do redis-cli -p "$REDIS_PORT" ping >/dev/null 2>&1 && break; sleep 0.2; done
fi
export REDIS_URL=${REDIS_URL:-redis://127.0.0.1:$REDIS_PORT/0}
export CHROMIUM_PATH=${CHROMIUM_PATH:-/usr/bin/chromium}
