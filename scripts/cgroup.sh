# Sourced by the benchmarks that measure the disk: `make_memory_cgroup MB`
# makes a memory cgroup of MB MiB (or gives the one it made the new limit) (process and page cache together, so that the page cache cannot
# hold the scratch files and the disk really carries them, as on a machine
# whose RAM is far smaller than the data). Sets `cg` to its directory, or
# to "" where this user may not make one (or $1 is 0), removes it on exit,
# and gives `run_in_cgroup CMD...`, which runs CMD in it (or plainly where
# there is none). cgroup v2 (memory.max) or v1 (memory.limit_in_bytes).
make_memory_cgroup() {
  local mb=$1 base c f
  # One made before is given the new limit.
  if [ -n "${cg:-}" ]; then
    for f in memory.max memory.limit_in_bytes; do
      [ -e "$cg/$f" ] && echo $((mb << 20)) > "$cg/$f" 2>/dev/null && return 0
    done
  fi
  cg=""
  [ "$mb" != 0 ] || return 0
  for base in /sys/fs/cgroup /sys/fs/cgroup/memory; do
    c="$base/tbforge-bench-$$"
    if mkdir "$c" 2>/dev/null; then
      if [ -e "$c/memory.max" ] && echo $((mb << 20)) > "$c/memory.max" 2>/dev/null; then cg=$c; break; fi
      if [ -e "$c/memory.limit_in_bytes" ] && echo $((mb << 20)) > "$c/memory.limit_in_bytes" 2>/dev/null; then cg=$c; break; fi
      rmdir "$c" 2>/dev/null || true
    fi
  done
  trap '[ -n "$cg" ] && rmdir "$cg" 2>/dev/null || true' EXIT
}

run_in_cgroup() {
  if [ -n "$cg" ]; then sh -c 'echo $$ > "$1/cgroup.procs" && shift && exec "$@"' sh "$cg" "$@"; else "$@"; fi
}
