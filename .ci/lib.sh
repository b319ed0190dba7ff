# Sourced by the .ci scripts (interop, claude-code, loop, codex,
# tui-e2e, speed): what each of them would otherwise write again. The
# script sets CHECK (its name, for messages) before it sources this file,
# from the repository's root; those that install a client also set
# CLIENTS (where clients are installed) and WEFT (the weft they build).

die() { echo "$CHECK: $*" >&2; exit 1; }

# need_tools TOOL...: each is on PATH, or the check says which is missing.
need_tools() {
  local tool
  for tool in "$@"; do
    command -v "$tool" >/dev/null 2>&1 || die "$tool is not installed; this check needs $*"
  done
}

# need_package COMMAND PACKAGE: COMMAND is on PATH, or Debian's PACKAGE is
# installed with apt-get (as root or through sudo) to put it there.
need_package() {
  local cmd=$1 pkg=$2 sudo=""
  command -v "$cmd" >/dev/null 2>&1 && return 0
  echo "== installing $pkg"
  command -v apt-get >/dev/null 2>&1 || die "$cmd is not installed and there is no apt-get to install $pkg with; install it and run again"
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null 2>&1 || die "$cmd is not installed, and installing $pkg needs root or sudo (neither is available)"
    sudo="sudo -n"
  fi
  if ! $sudo apt-get install -y "$pkg" >/dev/null 2>&1; then
    # The package lists may be missing or stale on a fresh machine.
    $sudo apt-get update >/dev/null 2>&1 || true
    $sudo apt-get install -y "$pkg" || die "apt-get could not install $pkg (see above)"
  fi
  command -v "$cmd" >/dev/null 2>&1 || die "apt-get reported success but $cmd is still not on PATH"
}

# build_weft builds cmd/weft into $WEFT.
build_weft() {
  echo "== build weft ($WEFT)"
  mkdir -p "$CLIENTS"
  go build -o "$WEFT" ./cmd/weft
}

# version_of PREFIX PACKAGE: the version of PACKAGE npm installed under
# PREFIX, or nothing.
version_of() { node -p "require(process.argv[1]).version" "$1/node_modules/$2/package.json" 2>/dev/null || true; }

# go_e2e LOG WHO FAILED -- ENV... go test -v ...: runs the tests, their
# output in LOG. A failure prints it (less the run/pause lines) and ends
# the check with FAILED; a test that skipped ends it too, as a green run
# that checked nothing (WHO was not driven).
go_e2e() {
  local log=$1 who=$2 failed=$3
  shift 4
  if ! env "$@" >"$log" 2>&1; then
    grep -v '^=== \(RUN\|PAUSE\|CONT\|NAME\)' "$log" >&2
    die "$failed"
  fi
  if grep -- '--- SKIP' "$log" >&2; then
    die "a test skipped (above): $who was not driven"
  fi
}

# passed LOG TEST...: each TEST ran and passed.
passed() {
  local log=$1 test
  shift
  for test in "$@"; do
    grep -q -- "--- PASS: $test " "$log" || { cat "$log" >&2; die "$test did not run"; }
  done
}

# show_reports DIR FILE...: prints each report in DIR, which must be there.
show_reports() {
  local dir=$1 report
  shift
  for report in "$@"; do
    [ -s "$dir/$report" ] || die "no report in $dir/$report"
    sed 's/^/   /' "$dir/$report"
  done
}
