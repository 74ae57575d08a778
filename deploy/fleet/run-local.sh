#!/bin/sh
# The reference fleet pipeline on one machine, from Debian's packages
# (victoria-metrics, prometheus-alertmanager): single-node VictoriaMetrics,
# N sharded vmagents scraping the agents listed in $TARGETS (file_sd), vmalert
# evaluating deploy/prometheus/rules with Alertmanager. The fleet test
# (tests/fleet/test_fleet_scale.py, `make fleet`) runs exactly this script.
#
#   deploy/fleet/run-local.sh start     # then open http://127.0.0.1:8428/vmui
#   deploy/fleet/run-local.sh stop
#
# Environment (defaults in brackets):
#   FLEET_DIR      state, logs and pid files [/tmp/gpuscope-fleet]
#   TARGETS        directory of file_sd target files [$FLEET_DIR/targets]
#   RULES          rule files, a glob [deploy/prometheus/rules/*.yml]
#   VMAGENTS       number of vmagent shards [2]
#   VM_PORT, VMAGENT_PORT (first of N), VMALERT_PORT, AM_PORT
#                  [8428, 8429, 8880, 9093]
#   SCRAPE         scrape and evaluation interval [15s]
#   VMALERT_FLAGS  more vmalert flags (the test shortens `for` with -rule.*)
# On several machines: the same flags, each vmagent on its own host with
# -promscrape.cluster.memberNum set, -remoteWrite.url at the engine
# (README.md: VictoriaMetrics cluster, Mimir, Thanos receive).
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
FLEET_DIR=${FLEET_DIR:-/tmp/gpuscope-fleet}
TARGETS=${TARGETS:-$FLEET_DIR/targets}
RULES=${RULES:-$ROOT/deploy/prometheus/rules/*.yml}
VMAGENTS=${VMAGENTS:-2}
VM_PORT=${VM_PORT:-8428}
VMAGENT_PORT=${VMAGENT_PORT:-8429}
VMALERT_PORT=${VMALERT_PORT:-8880}
AM_PORT=${AM_PORT:-9093}
SCRAPE=${SCRAPE:-15s}
VMALERT_FLAGS=${VMALERT_FLAGS:-}
VM=http://127.0.0.1:$VM_PORT

start() {
  mkdir -p "$FLEET_DIR" "$TARGETS"
  # scrape.yml with this run's target directory and interval.
  sed -e "s|targets/\*|$TARGETS/*|g" -e "s|scrape_interval: 15s|scrape_interval: $SCRAPE|" \
    "$HERE/scrape.yml" > "$FLEET_DIR/scrape.yml"
  victoria-metrics -storageDataPath="$FLEET_DIR/vm-data" -httpListenAddr="127.0.0.1:$VM_PORT" \
    -retentionPeriod=1d -search.latencyOffset=0s -loggerLevel=WARN \
    > "$FLEET_DIR/vm.log" 2>&1 &
  echo $! > "$FLEET_DIR/vm.pid"
  # vmalert restores alert state from it at start: wait until it answers.
  n=0
  until curl -fsS "$VM/health" > /dev/null 2>&1; do
    n=$((n + 1))
    [ "$n" -lt 100 ] || { echo "victoria-metrics did not start: $FLEET_DIR/vm.log" >&2; exit 1; }
    sleep 0.2
  done
  i=0
  while [ "$i" -lt "$VMAGENTS" ]; do
    vmagent -promscrape.config="$FLEET_DIR/scrape.yml" \
      -promscrape.cluster.membersCount="$VMAGENTS" -promscrape.cluster.memberNum="$i" \
      -promscrape.configCheckInterval=5s -promscrape.fileSDCheckInterval=5s \
      -remoteWrite.url="$VM/api/v1/write" -remoteWrite.tmpDataPath="$FLEET_DIR/vmagent-$i" \
      -httpListenAddr="127.0.0.1:$((VMAGENT_PORT + i))" -loggerLevel=WARN \
      > "$FLEET_DIR/vmagent-$i.log" 2>&1 &
    echo $! > "$FLEET_DIR/vmagent-$i.pid"
    i=$((i + 1))
  done
  prometheus-alertmanager --config.file="$ROOT/deploy/alertmanager/alertmanager.yml" \
    --storage.path="$FLEET_DIR/am-data" --web.listen-address="127.0.0.1:$AM_PORT" \
    --cluster.listen-address= > "$FLEET_DIR/am.log" 2>&1 &
  echo $! > "$FLEET_DIR/am.pid"
  # POSIX sh has no arrays: the rule flags are start's own arguments (it takes none).
  set --
  for f in $RULES; do set -- "$@" "-rule=$f"; done  # RULES is a glob
  # shellcheck disable=SC2086  # VMALERT_FLAGS is a list
  vmalert "$@" \
    -datasource.url="$VM" -remoteWrite.url="$VM" -remoteRead.url="$VM" \
    -notifier.url="http://127.0.0.1:$AM_PORT" -evaluationInterval="$SCRAPE" \
    -httpListenAddr="127.0.0.1:$VMALERT_PORT" -loggerLevel=WARN $VMALERT_FLAGS \
    > "$FLEET_DIR/vmalert.log" 2>&1 &
  echo $! > "$FLEET_DIR/vmalert.pid"
}

stop() {
  for f in "$FLEET_DIR"/*.pid; do
    [ -e "$f" ] || continue
    kill "$(cat "$f")" 2>/dev/null || true
    rm -f "$f"
  done
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  *) echo "usage: $0 start|stop" >&2; exit 2 ;;
esac
