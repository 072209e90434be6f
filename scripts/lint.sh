#!/usr/bin/env bash
# The lint step. Usage: scripts/lint.sh [BUILD_DIR]   (default: build)
#  1. clang-format (.clang-format): every C and C++ file of src/, include/,
#     tests/ and bench/ is formatted as it would format it
#  2. shellcheck: every shell script of the repository (by .sh or by a sh or
#     bash #! line), and the remote scripts' bodies as fleetreap sends them
#     to hosts (written by BUILD_DIR/tests/dump_remote_scripts), as POSIX sh
#  3. clang-tidy (.clang-tidy) over src/, with BUILD_DIR/compile_commands.json
# BUILD_DIR must be a configured build (scripts/build.sh makes build/); the
# dump tool is built in it if needed. Prints each finding as FILE:LINE:...;
# exits non-zero if any step found anything.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
build=${1:-build}
status=0

fail() {
  echo "lint: $*" >&2
  status=1
}

# The repository's files: tracked and not-ignored ones (a new file counts
# before it is committed), those that exist in the work tree.
repo_files() {
  if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    git ls-files -z --cached --others --exclude-standard -- "$@" |
      while IFS= read -r -d '' f; do [ -f "$f" ] && printf '%s\n' "$f"; done | sort -u
  else
    find "$@" -path '*/build*' -prune -o -type f -print | sort
  fi
}

# 1. Formatting.
mapfile -t cxx < <(repo_files src include tests bench | grep -E '\.(cc|h|c|cpp|hpp)$')
if ! clang-format --dry-run -Werror "${cxx[@]}"; then
  fail "clang-format: the files above differ from .clang-format (clang-format -i FILE fixes them)"
fi

# 2. shellcheck: the scripts, then the remote scripts' bodies.
shell=()
while IFS= read -r f; do
  case "$f" in
    *.sh) shell+=("$f") ;;
    *) head -n 1 "$f" 2>/dev/null | grep -qE '^#!.*[/ ](sh|bash|dash)([[:space:]]|$)' && shell+=("$f") ;;
  esac
done < <(repo_files .)
if ! shellcheck -f gcc "${shell[@]}"; then
  fail "shellcheck: findings in the shell scripts above"
fi

bodies="$build/remote-scripts"
if ! cmake --build "$build" --target dump_remote_scripts >/dev/null; then
  fail "could not build dump_remote_scripts in $build (configure it first: scripts/build.sh)"
else
  rm -rf "$bodies" && mkdir -p "$bodies"
  if ! "$build/tests/dump_remote_scripts" "$bodies"; then
    fail "dump_remote_scripts failed"
  elif ! shellcheck -s sh -f gcc "$bodies"/*.sh; then
    fail "shellcheck: findings in the remote scripts above ($bodies/; their text is in src/remote/<step>.cc)"
  fi
fi

# 3. clang-tidy over src/.
if [ ! -f "$build/compile_commands.json" ]; then
  fail "no $build/compile_commands.json (configure the build first: scripts/build.sh)"
else
  tidy_log="$build/clang-tidy.log"
  # run-clang-tidy 14 always asks for colours: they are taken out of the log.
  run-clang-tidy -p "$build" -j"$(nproc)" -quiet "$PWD/src/" 2>&1 |
    sed 's/\x1b\[[0-9;]*m//g' >"$tidy_log"
  tidy_rc=${PIPESTATUS[0]}
  findings=$(grep -E '^[^ ]+:[0-9]+:[0-9]+: (warning|error): ' "$tidy_log" | sort -u)
  if [ -n "$findings" ]; then
    printf '%s\n' "$findings"
    fail "clang-tidy: $(printf '%s\n' "$findings" | wc -l) findings above (full output: $tidy_log)"
  elif [ "$tidy_rc" -ne 0 ]; then
    tail -n 30 "$tidy_log"
    fail "clang-tidy failed (exit $tidy_rc, full output: $tidy_log)"
  fi
fi

[ $status -eq 0 ] && echo "lint: clean (clang-format, shellcheck, clang-tidy)" >&2
exit $status
