#!/usr/bin/env bash
# Installs what this project needs and a fresh machine lacks, from Debian's packages and the Go module proxy only.
#   dev/setup.sh          runtime: redis-server, ffmpeg + ffprobe, FerretDB 1.24 (unless the URLs are set)
#   dev/setup.sh --test   also what the test suite drives: chromium, espeak-ng, sox, praat, prometheus
# Used by `npm start`, `npm test` and .ci/run alike. Idempotent: does nothing when everything is there.
set -euo pipefail

FERRETDB_VERSION=v1.24.2
# Our build of it: upstream plus dev/engines/ferretdb-*.patch (the suffix changes when the patches do, so an
# older build on this machine is rebuilt). dev/engines/local-engines.ts looks for the same name.
FERRETDB_BUILD=$FERRETDB_VERSION-lc3
ENGINE_HOME="${LC_ENGINE_HOME:-${XDG_CACHE_HOME:-$HOME/.cache}/lc-engines}"
FERRETDB_BIN="$ENGINE_HOME/ferretdb-$FERRETDB_BUILD"
PATCHES_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/engines"

want_test=0
[[ "${1:-}" == "--test" ]] && want_test=1

missing=()
need() { command -v "$1" >/dev/null 2>&1 || missing+=("$2"); }
if [[ -z "${REDIS_URL:-}" ]]; then need redis-server redis-server; fi
need git git # applies our FerretDB patches
need "${FFMPEG_PATH:-ffmpeg}" ffmpeg
need "${FFPROBE_PATH:-ffprobe}" ffmpeg
if [[ $want_test == 1 ]]; then
  need redis-server redis-server
  need chromium chromium
  need espeak-ng espeak-ng
  need sox sox
  need praat praat
  need prometheus prometheus
  need promtool prometheus
fi
mapfile -t missing < <(printf '%s\n' "${missing[@]}" | sort -u | sed '/^$/d')

if [[ ${#missing[@]} -gt 0 ]]; then
  if [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null; then
    echo "setup: installing Debian packages: ${missing[*]}" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  else
    echo "setup: missing programs. Install these Debian packages: ${missing[*]}" >&2
    echo "       (or set REDIS_URL / FFMPEG_PATH / FFPROBE_PATH to existing ones)" >&2
    exit 1
  fi
fi

# FerretDB v1.24 needs Go >= 1.24; Debian 12 ships 1.19. Use the Go on PATH when it is new enough, otherwise
# fetch the official toolchain module (golang.org/toolchain) through the Go module proxy with whatever Go
# exists (Debian's golang-go is enough for `go mod download`) and keep it beside the engines.
GO_TOOLCHAIN_VERSION=1.24.4
go_for_ferretdb() {
  if command -v go >/dev/null && go_at_least "$(go env GOVERSION 2>/dev/null)"; then command -v go; return; fi
  local dest="$ENGINE_HOME/go$GO_TOOLCHAIN_VERSION"
  if [[ ! -x "$dest/bin/go" ]]; then
    if ! command -v go >/dev/null; then
      if [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null; then
        DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends golang-go ca-certificates >/dev/null
      else
        echo "setup: FerretDB $FERRETDB_VERSION is missing and Go is not installed." >&2
        echo "       Install Go >= 1.24 (or Debian's golang-go), or set MONGODB_URI to a MongoDB 7 server." >&2
        exit 1
      fi
    fi
    echo "setup: fetching the Go $GO_TOOLCHAIN_VERSION toolchain through the Go module proxy" >&2
    local arch; arch=$(go env GOARCH)
    local dir; dir=$(cd "$(mktemp -d)" && GOFLAGS=-mod=mod go mod download -json "golang.org/toolchain@v0.0.1-go$GO_TOOLCHAIN_VERSION.linux-$arch" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",*$/\1/p')
    [[ -n "$dir" && -d "$dir" ]] || { echo "setup: could not fetch the Go toolchain" >&2; exit 1; }
    mkdir -p "$ENGINE_HOME" && rm -rf "$dest.tmp" && cp -r "$dir" "$dest.tmp" && chmod -R u+w "$dest.tmp"
    chmod +x "$dest.tmp"/bin/* "$dest.tmp"/pkg/tool/*/*
    mv "$dest.tmp" "$dest"
  fi
  echo "$dest/bin/go"
}
go_at_least() { # go_at_least go1.26.8 -> true when >= 1.24
  local v=${1#go}; local major=${v%%.*}; local rest=${v#*.}; local minor=${rest%%.*}
  [[ $major =~ ^[0-9]+$ && $minor =~ ^[0-9]+$ ]] && (( major > 1 || (major == 1 && minor >= 24) ))
}

# FerretDB is needed only for the embedded local MongoDB-wire engine.
if [[ -z "${MONGODB_URI:-}" || $want_test == 1 ]] && [[ ! -x "$FERRETDB_BIN" ]] && ! command -v ferretdb >/dev/null; then
  GO=$(go_for_ferretdb)
  echo "setup: building FerretDB $FERRETDB_BUILD with $("$GO" version) (once, ~1 min)" >&2
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  (
    cd "$work"
    "$GO" mod init lc-engines >/dev/null 2>&1
    # `go install pkg@version` trips over the proxy's version list here, so fetch the exact version instead.
    GOFLAGS=-mod=mod "$GO" get "github.com/FerretDB/FerretDB@$FERRETDB_VERSION" >/dev/null 2>&1
    src=$("$GO" list -m -f '{{.Dir}}' "github.com/FerretDB/FerretDB")
    cp -r "$src" "$work/src" && chmod -R u+w "$work/src"
    # The module zip lacks the generated version file the binary refuses to start without.
    echo "$FERRETDB_VERSION" > "$work/src/build/version/version.txt"
    for p in "$PATCHES_DIR"/ferretdb-*.patch; do (cd "$work/src" && git apply "$p"); done
    cd "$work/src" && "$GO" build -trimpath -o "$work/ferretdb" ./cmd/ferretdb
  )
  mkdir -p "$ENGINE_HOME"
  mv "$work/ferretdb" "$FERRETDB_BIN"
  echo "setup: FerretDB installed at $FERRETDB_BIN" >&2
fi
