#!/usr/bin/env bash
# Installs what this project needs and a fresh machine lacks, from Debian's packages and the Go module proxy only.
#   scripts/setup.sh          runtime: redis-server, ffmpeg + ffprobe, FerretDB 1.24 (unless the URLs are set)
#   scripts/setup.sh --test   also what the test suite drives: chromium, espeak-ng, sox, praat, prometheus
# Used by `npm start`, `npm test` and .ci/run alike. Idempotent: does nothing when everything is there.
set -euo pipefail

FERRETDB_VERSION=v1.24.2
ENGINE_HOME="${LC_ENGINE_HOME:-${XDG_CACHE_HOME:-$HOME/.cache}/lc-engines}"
FERRETDB_BIN="$ENGINE_HOME/ferretdb-$FERRETDB_VERSION"

want_test=0
[[ "${1:-}" == "--test" ]] && want_test=1

missing=()
need() { command -v "$1" >/dev/null 2>&1 || missing+=("$2"); }
if [[ -z "${REDIS_URL:-}" ]]; then need redis-server redis-server; fi
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

# FerretDB is needed only for the embedded local MongoDB-wire engine.
if [[ -z "${MONGODB_URI:-}" || $want_test == 1 ]] && [[ ! -x "$FERRETDB_BIN" ]] && ! command -v ferretdb >/dev/null; then
  if ! command -v go >/dev/null; then
    echo "setup: FerretDB $FERRETDB_VERSION is missing and Go is not installed." >&2
    echo "       Install Go (https://go.dev/dl) so this script can build it, or set MONGODB_URI to a MongoDB 7 server." >&2
    exit 1
  fi
  echo "setup: building FerretDB $FERRETDB_VERSION with the Go toolchain (once, ~1 min)" >&2
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  (
    cd "$work"
    go mod init lc-engines >/dev/null 2>&1
    # `go install pkg@version` trips over the proxy's version list here, so fetch the exact version instead.
    GOFLAGS=-mod=mod go get "github.com/FerretDB/FerretDB@$FERRETDB_VERSION" >/dev/null 2>&1
    src=$(go list -m -f '{{.Dir}}' "github.com/FerretDB/FerretDB")
    cp -r "$src" "$work/src" && chmod -R u+w "$work/src"
    # The module zip lacks the generated version file the binary refuses to start without.
    echo "$FERRETDB_VERSION" > "$work/src/build/version/version.txt"
    cd "$work/src" && go build -trimpath -o "$work/ferretdb" ./cmd/ferretdb
  )
  mkdir -p "$ENGINE_HOME"
  mv "$work/ferretdb" "$FERRETDB_BIN"
  echo "setup: FerretDB installed at $FERRETDB_BIN" >&2
fi
