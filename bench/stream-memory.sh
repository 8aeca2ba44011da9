#!/usr/bin/env bash
# bench/stream-memory.sh MASKBUS ROWS [BUMP]: the peak RSS of both agents across one source
# transaction updating ROWS rows of `transactions`, followed through the change stream.
# Run it on the databases and configs that stream-bench left behind:
#   target/release/stream-bench --maskbus target/release/maskbus --profile large --keep
#   bench/stream-memory.sh target/release/maskbus 300000
# DATABASE_URL names the cluster (as for stream-bench). Prints each agent's VmHWM before the
# update (what starting and catching up took) and after it was applied.
set -euo pipefail
maskbus=$1; rows=$2; bump=${3:-1}
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source_url="${DATABASE_URL%/*}/mbb_stream_source"
logs=$(mktemp -d)
MASKBUS_LOG=info "$maskbus" run --config target/bench/stream-producer.toml >/dev/null 2>"$logs/p" &
producer=$!
MASKBUS_LOG=info "$maskbus" run --config target/bench/stream-consumer-stream.toml >/dev/null 2>"$logs/c" &
consumer=$!
trap 'kill $producer $consumer 2>/dev/null || true; rm -rf "$logs"' EXIT
applied() { grep -c "changes applied.*rows=$rows " "$logs/c" || true; }
hwm() { awk '/VmHWM/ {print $2}' "/proc/$1/status"; }
# Caught up: an answer with nothing to apply, or the copy done.
for _ in $(seq 1 600); do
  grep -q "following the change stream\|changes applied" "$logs/c" && break
  sleep 0.2
done
before=$(applied)
echo "before: producer $(hwm $producer) kB, consumer $(hwm $consumer) kB"
psql -q "$source_url" -c "UPDATE transactions SET amount = amount + $bump WHERE id <= $rows"
for _ in $(seq 1 3000); do
  [ "$(applied)" -gt "$before" ] && break
  sleep 0.1
done
[ "$(applied)" -gt "$before" ] || { echo "the update was not applied in five minutes" >&2; exit 1; }
echo "after:  producer $(hwm $producer) kB, consumer $(hwm $consumer) kB"
