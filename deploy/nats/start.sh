#!/bin/sh
# Starts nats-server on one of Agora's configurations (single.conf, cluster-node.conf) once every
# password auth.conf names is set: nats-server takes an empty variable as an empty password, which
# lets anyone in as that user without one, so an unset or empty password stops the start here.
#   sh start.sh /etc/nats/single.conf [more nats-server arguments]
# Exit code 2 (and one line per password) when one is missing or not what the server can read.
set -eu
config=${1:?usage: start.sh <nats-server configuration> [more nats-server arguments]}
shift
status=0
for role in SERVICE GATEWAY AGENT OBSERVER AUDITOR; do
  name="AGORA_NATS_${role}_PASSWORD"
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
