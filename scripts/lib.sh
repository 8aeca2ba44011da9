# Shared by the scripts in this folder: where the repo is, how to reach the cluster, how to build
# the binary once. Sourced, not run.

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

# The maintenance URL of the cluster: DATABASE_URL if set, else the throwaway dev cluster.
cluster_url() {
  "$repo/scripts/dev-db" | tail -n 1
}

# The URL of database $2 on the server of URL $1 (query string kept).
db_url() {
  local url="$1" name="$2" query=""
  case "$url" in *\?*) query="?${url#*\?}"; url="${url%%\?*}" ;; esac
  local scheme="${url%%://*}" rest="${url#*://}"
  local authority="${rest%%/*}"
  echo "${scheme}://${authority}/${name}${query}"
}

# Builds the maskbus binary (profile $1, default dev) and prints its path: quietly, or with
# cargo's progress on stderr (each crate as it compiles) when $2 is --progress. Cargo only
# rebuilds what changed, so calling this from every script costs nothing after the first time.
build_maskbus() {
  local profile="${1:-dev}" dir=debug quiet=--quiet
  [ "$profile" = release ] && dir=release
  [ "${2:-}" = --progress ] && quiet=
  (cd "$repo" && cargo build $quiet --profile "$profile" --bin maskbus) >&2
  echo "$repo/target/$dir/maskbus"
}

# "1m05s" for $1 seconds.
elapsed() {
  local s="$1"
  if [ "$s" -ge 60 ]; then printf '%dm%02ds' $((s / 60)) $((s % 60)); else printf '%ds' "$s"; fi
}

# A filter: copies its input to its output line by line and, whenever no line has come for
# ${1:-8} seconds, says what is still running and for how long ("   ... still at step 2, build
# maskbus (2m10s)"), so a long step never looks hung. The step is the last "== N. what" line
# seen (scripts/demo's headings), up to its first ":", "," or " (".
heartbeat() {
  local interval="${1:-8}" step="" started=$SECONDS line pending=""
  while :; do
    if IFS= read -r -t "$interval" line; then
      line="$pending$line"
      pending=""
      case "$line" in
        "== "*)
          step="${line#== }"
          step="${step%%:*}"
          step="${step%%,*}"
          step="${step%% (*}"
          step="step ${step/. /, }"
          started=$SECONDS
          ;;
      esac
      printf '%s\n' "$line"
    elif [ $? -gt 128 ]; then
      # Timed out: what came of a line so far is kept for when the line ends.
      pending="$pending$line"
      printf '   ... still at %s (%s)\n' "${step:-work}" "$(elapsed $((SECONDS - started)))"
    else
      [ -z "$pending$line" ] || printf '%s' "$pending$line"
      return 0
    fi
  done
}

# The URL $1 with $2 as its user (any password in it dropped).
url_as() {
  local url="$1" user="$2"
  local scheme="${url%%://*}" rest="${url#*://}"
  local authority="${rest%%/*}" tail="${rest#*/}"
  [ "$tail" = "$rest" ] && tail=""
  echo "${scheme}://${user}@${authority##*@}/${tail}"
}

# A fresh, empty database $2 on the server of maintenance URL $1, owned by login role $3 (made
# if missing, not a superuser): a consumer's test database, which it fills as that role.
fresh_target() {
  local url="$1" name="$2" owner="$3"
  PGOPTIONS="-c client_min_messages=warning" psql -X -q -v ON_ERROR_STOP=1 "$url" \
    -c "DO \$\$ BEGIN CREATE ROLE $owner LOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END \$\$" \
    -c "DROP DATABASE IF EXISTS $name WITH (FORCE)" \
    -c "CREATE DATABASE $name OWNER $owner"
}
