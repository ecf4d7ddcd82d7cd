#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The command's output files, written as root into a folder another user may write to (a sticky
# folder writable by all, as /tmp, here owned by that user so that the kernel's protected_symlinks
# does not hide a bug): a symbolic link, a FIFO or a folder that the user planted at the output
# path is refused with a message naming the path, the command exits non-zero and never hangs, and
# nothing is written through the link; links and FIFOs planted at the temporary names the command
# used to take (PATH.tmp.<pid>) are never used. Covers every command that writes a file:
# generate, discover and convert (--json/--tree/--block/--dot/-o), show -o, metrics -o and
# defrag --apply --log (an append log).
set -u
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (root writes, another user plants the files)"; exit 77; }
command -v setpriv >/dev/null || { echo "SKIP: setpriv (util-linux) not installed"; exit 77; }
command -v timeout >/dev/null || { echo "SKIP: timeout (coreutils) not installed"; exit 77; }
bin="$top_builddir/topoaware"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
chmod 755 "$tmp"
fails=0
ok() { echo "ok: $1"; }
bad() { echo "FAIL: $1"; fails=$((fails + 1)); }
as_user() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }

mkdir "$tmp/in" "$tmp/bin"
"$bin" generate fat-tree --leaves 2 --hosts-per-leaf 2 --json "$tmp/in/topology.json" \
  --ibnetdiscover "$tmp/in/fabric.ibnd" >/dev/null || exit 99
hash=$(sed -n 's/^ *"hash": "\(sha256:[0-9a-f]*\)".*/\1/p' "$tmp/in/topology.json" | head -n 1)
cat >"$tmp/in/status.json" <<JSON
{"schema": "topoaware-status/1", "plugin": "select/cons_tres_topoaware", "written_at": $(date +%s),
 "topology": {"file": "$tmp/in/topology.json", "hash": "$hash", "error": ""},
 "job_test": {"calls": 0, "total_us": 0, "max_us": 0, "layout_calls": 0, "layout_total_us": 0, "layout_max_us": 0,
              "le_us": [100], "counts": [0, 0], "layout_counts": [0, 0]},
 "jobs": []}
JSON
# Stand-ins for Slurm's commands: an idle cluster.
for c in squeue sinfo scontrol scancel; do printf '#!/bin/sh\nexit 0\n' >"$tmp/bin/$c"; done
chmod 755 "$tmp/bin"/*
export PATH="$tmp/bin:$PATH" TOPOAWARE_CONF="$tmp/in/none.conf"
victim="$tmp/victim"
src=(--topology "$tmp/in/topology.json" --status "$tmp/in/status.json")

# name|arguments, OUT standing for the output path.
cases=(
  "generate --json|generate fat-tree --leaves 2 --hosts-per-leaf 2 --json OUT"
  "generate --ibnetdiscover|generate fat-tree --leaves 2 --hosts-per-leaf 2 --ibnetdiscover OUT"
  "discover --json|discover -q --ibnetdiscover $tmp/in/fabric.ibnd --json OUT"
  "discover --tree|discover -q --ibnetdiscover $tmp/in/fabric.ibnd --tree OUT"
  "discover --block|discover -q --ibnetdiscover $tmp/in/fabric.ibnd --block OUT"
  "discover -o|discover -q --ibnetdiscover $tmp/in/fabric.ibnd --format summary -o OUT"
  "convert --dot|convert $tmp/in/topology.json --dot OUT"
  "show -o|show ${src[*]} -o OUT"
  "metrics -o|metrics ${src[*]} -o OUT"
  "defrag --log|defrag --apply ${src[*]} --log OUT"
)
# --svg runs Graphviz's dot on files in a private folder of its own.
command -v dot >/dev/null && cases+=("convert --svg|convert $tmp/in/topology.json --svg OUT")

# A fresh folder of the user's, sticky and writable by all; the victim is root's, outside it.
fresh() {
  rm -rf "$tmp/pub"
  mkdir "$tmp/pub" && chown 65534:65534 "$tmp/pub" && chmod 1777 "$tmp/pub"
  printf 'precious\n' >"$victim"
}

plant() {  # KIND PATH, as the user
  case $1 in
  symlink) as_user ln -s "$victim" "$2" ;;
  fifo) as_user mkfifo "$2" ;;
  folder) as_user mkdir "$2" ;;
  esac
}

kind_of() {
  if [ -L "$1" ]; then echo symlink; elif [ -p "$1" ]; then echo fifo; elif [ -d "$1" ]; then echo folder
  elif [ -f "$1" ]; then echo file; else echo none; fi
}

victim_kept() { [ "$(cat "$victim")" = precious ]; }

# A link, a FIFO or a folder at the output path: refused, named, nothing written, no hang.
for c in "${cases[@]}"; do
  name=${c%%|*}
  for kind in symlink fifo folder; do
    fresh
    out="$tmp/pub/out"
    plant "$kind" "$out" || exit 99
    read -r -a args <<<"${c#*|}"
    args=("${args[@]/#OUT/$out}")
    timeout 20 "$bin" "${args[@]}" >"$tmp/stdout" 2>"$tmp/stderr"
    rc=$?
    what="$name with a $kind at the output path"
    if [ $rc = 124 ]; then bad "$what: hung (killed after 20 s)"
    elif [ $rc = 0 ]; then bad "$what: exit 0 (expected a refusal)"
    elif ! grep -qF "$out" "$tmp/stderr"; then bad "$what: the message does not name $out: $(cat "$tmp/stderr")"
    elif ! victim_kept; then bad "$what: the file the link points to was changed: $(head -c 200 "$victim")"
    elif [ "$(kind_of "$out")" != "$kind" ]; then bad "$what: the $kind was replaced by a $(kind_of "$out")"
    elif [ -n "$(find "$tmp/pub" -mindepth 1 ! -path "$out" -print -quit)" ]; then
      bad "$what: left $(find "$tmp/pub" -mindepth 1 ! -path "$out" | head -n 3)"
    else ok "$what: refused (exit $rc): $(head -n 1 "$tmp/stderr")"
    fi
  done
done

# A link or a FIFO at PATH.tmp.<pid> (the command's pid: bash execs it): never used.
for c in "${cases[@]}"; do
  name=${c%%|*}
  [ "$name" = "defrag --log" ] && continue  # an append log has no temporary file
  for kind in symlink fifo; do
    fresh
    out="$tmp/pub/out"
    read -r -a args <<<"${c#*|}"
    args=("${args[@]/#OUT/$out}")
    export -f plant as_user
    export victim
    timeout 20 bash -c 'plant "$1" "$2.tmp.$$" || exit 99; shift 2; exec "$@"' _ "$kind" "$out" "$bin" "${args[@]}" \
      >"$tmp/stdout" 2>"$tmp/stderr"
    rc=$?
    what="$name with a $kind at the temporary name $out.tmp.<pid>"
    if [ $rc = 124 ]; then bad "$what: hung (killed after 20 s)"
    elif ! victim_kept; then bad "$what: the file the link points to was written: $(head -c 200 "$victim")"
    elif [ $rc != 0 ]; then bad "$what: exit $rc: $(cat "$tmp/stderr")"
    elif [ "$(kind_of "$out")" != file ] || [ ! -s "$out" ]; then bad "$what: $out is not the written file"
    elif [ "$(stat -c %a "$out")" != 644 ]; then bad "$what: $out has mode $(stat -c %a "$out"), not 644"
    else ok "$what: not used"
    fi
  done
done

# The log is appended to, never replaced: an existing log keeps its lines.
fresh
printf 'earlier line\n' >"$tmp/pub/defrag.log"
timeout 20 "$bin" defrag --apply "${src[@]}" --log "$tmp/pub/defrag.log" >/dev/null 2>"$tmp/stderr"
rc=$?
if [ $rc != 0 ]; then bad "defrag --log on a regular file: exit $rc: $(cat "$tmp/stderr")"
elif [ "$(head -n 1 "$tmp/pub/defrag.log")" != "earlier line" ] || [ "$(wc -l <"$tmp/pub/defrag.log")" -lt 2 ]; then
  bad "defrag --log did not append: $(cat "$tmp/pub/defrag.log")"
else ok "defrag --log appends to a regular file"
fi
# A second name (hard link) of a file elsewhere: refused, the file is not appended to.
ln "$victim" "$tmp/pub/linked.log"
timeout 20 "$bin" defrag --apply "${src[@]}" --log "$tmp/pub/linked.log" >/dev/null 2>"$tmp/stderr"
rc=$?
if [ $rc = 0 ] || ! victim_kept || ! grep -qF "$tmp/pub/linked.log" "$tmp/stderr"; then
  bad "defrag --log on a hard link: exit $rc, victim $(head -c 100 "$victim"): $(cat "$tmp/stderr")"
else ok "defrag --log refuses a file with a second name: $(head -n 1 "$tmp/stderr")"
fi

[ $fails = 0 ] || { echo "$fails check(s) failed"; exit 1; }
