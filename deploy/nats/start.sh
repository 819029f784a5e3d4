#!/bin/sh
# Starts nats-server on one of Agora's configurations (single.conf, cluster-node.conf) once every
# password auth.conf names is set: nats-server takes an empty variable as an empty password, which
# lets anyone in as that user without one, so an unset or empty password stops the start here.
#   sh start.sh /etc/nats/single.conf [more nats-server arguments]
# Exit code 2 (and one line per password) when one is missing or not what the server can read.
set -eu
config=${1:?usage: start.sh <nats-server configuration> [more nats-server arguments]}
shift
# The passwords are those the configuration and the files it includes name (auth.conf and
# roles.conf: SERVICE GATEWAY AGENT OBSERVER AUDITOR; auth-services.conf and services.conf: one per
# service, the gateway, OBSERVER and AUDITOR).
files() {
  echo "$1"
  for f in $(sed -n 's/^[[:space:]]*include[[:space:]]*"\{0,1\}\([^"]*\)"\{0,1\}.*/\1/p' "$1"); do
    files "$(dirname "$1")/$f"
  done
}
names=$(for f in $(files "$config"); do grep -o 'AGORA_NATS_[A-Z_]*_PASSWORD' "$f" || true; done | sort -u)
[ -n "$names" ] || { echo "nats: $config names no AGORA_NATS_*_PASSWORD (is it one of Agora's configurations?)" >&2; exit 2; }
status=0
for name in $names; do
  eval "value=\${$name:-}"
  case $value in
    '')
      echo "nats: $name is not set (an empty password would let anyone in; see deploy/nats/auth.conf)" >&2
      status=2
      ;;
    [!A-Za-z]* | *[!A-Za-z0-9_-]*)
      echo "nats: $name must start with a letter and hold only letters, digits, - and _" >&2
      status=2
      ;;
  esac
done
[ "$status" -eq 0 ] || exit "$status"
exec "${NATS_SERVER_BIN:-nats-server}" -c "$config" "$@"
