#!/bin/sh
# tdsim as a tool: the same seed gives byte-identical output; the replay line
# printed on a violation replays it; bad options are rejected with one line
# and exit status 2; --help documents every option; the list and the output
# formats scripts rely on.
. "$top_srcdir/tests/tap.sh"
SIM="$top_builddir/tests/sim/tdsim-test"
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
plan 14

# determinism: twice the same seeds, per-run lines included
args="--algo bcj --workload tree --ranks 2-16 --adversarial --lmax 8 --schedules 200 --seed 77 --per-run"
"$SIM" $args >"$tmp/a" && "$SIM" $args >"$tmp/b" && cmp -s "$tmp/a" "$tmp/b"
ok $? "same seed, byte-identical output ($(wc -l <"$tmp/a") lines)"
"$SIM" --algo bcj --workload tree --ranks 2-16 --adversarial --lmax 8 --schedules 200 --seed 78 --per-run >"$tmp/c"
cmp -s "$tmp/a" "$tmp/c"
[ $? -ne 0 ]; ok $? "another seed, different output"
"$SIM" --workload skrB --verbose --seed 5 >"$tmp/v1" && "$SIM" --workload skrB --verbose --seed 5 >"$tmp/v2" && cmp -s "$tmp/v1" "$tmp/v2"
ok $? "--verbose trace is deterministic too ($(wc -l <"$tmp/v1") events)"

# a violation prints one line with a replay command that replays it
b=$("$SIM" --list-broken | head -n 1)
if [ -n "$b" ]; then
    "$SIM" --algo "$b" --workload spawn --ranks 2-16 --adversarial --gens 4 --schedules 10000 >"$tmp/v" 2>&1
    rc=$?
    [ $rc -eq 1 ] && [ "$(grep -c '^VIOLATION' "$tmp/v")" -eq 1 ]; ok $? "$b: exit 1 and one VIOLATION line"
    line=$(grep '^VIOLATION' "$tmp/v")
    cmd=${line##*; replay: }
    case $cmd in *" --schedules 1") r=0 ;; *) r=1 ;; esac; ok $r "replay command ends in --schedules 1: $cmd"
    sh -c "$cmd" >"$tmp/r" 2>&1
    [ $? -eq 1 ] && [ "$(grep '^VIOLATION' "$tmp/r")" = "$line" ]; ok $? "the replay command reproduces the same violation"
else
    skip "no broken variants"; skip "no broken variants"; skip "no broken variants"
fi

# bad options: exit 2, one line on stderr, nothing on stdout
n=0
for bad in "--algo nosuch" "--workload nosuch" "--ranks 0" "--ranks 5-3" "--pdelay gauss:1" "--p 1.5" "--bogus" "--seed" \
            "--xulau-topo cube" "--model fast" "--help=3" "positional"; do
    "$SIM" $bad >"$tmp/o" 2>"$tmp/e"
    rc=$?
    [ $rc -eq 2 ] && [ "$(wc -l <"$tmp/e")" -eq 1 ] && [ ! -s "$tmp/o" ] || { diag "'$bad': rc=$rc $(cat "$tmp/e")"; n=$((n + 1)); }
done
ok $n "12 bad option sets: exit 2 with one line on stderr"

# --help names every option the parser accepts
"$SIM" --help >"$tmp/h"; ok $? "--help exits 0"
missing=
for o in $(grep -o '"--[a-z-]*"' "$top_srcdir/tests/sim/tdsim.c" | tr -d '"' | sort -u); do
    grep -q -- "$o" "$tmp/h" || missing="$missing $o"
done
[ -z "$missing" ]; ok $? "--help documents every option${missing:+ (missing:$missing)}"

# lists: broken variants never in --list-algos
"$SIM" --list-algos >"$tmp/l" && [ -s "$tmp/l" ]; ok $? "--list-algos: $(tr '\n' ' ' <"$tmp/l")"
r=0; for b in $("$SIM" --list-broken); do grep -qx "$b" "$tmp/l" && r=1; done
ok $r "no broken variant in --list-algos"

# machine-readable output
"$SIM" --workload skrA --json --schedules 3 --per-run >"$tmp/j" &&
    python3 -c 'import json,sys; [json.loads(l) for l in open(sys.argv[1])]' "$tmp/j"
ok $? "--json: every line is a JSON object"
"$SIM" --workload ring --schedules 1 | grep -q '^summary .* violations=0 .*ctl.terminate='
ok $? "key=value summary with control messages by type name"

# the step models of cda-credit-hpc.txt §V-B run and agree on the tree's size
t1=$("$SIM" --workload tree --tree-seed 3 --model instant | sed -n 's/^run .* tasks=\([0-9]*\) .*/\1/p')
t2=$("$SIM" --workload tree --tree-seed 3 --model load --mapping random | sed -n 's/^run .* tasks=\([0-9]*\) .*/\1/p')
t3=$("$SIM" --tree-info --tree-seed 3 | sed -n 's/.* tasks=\([0-9]*\) .*/\1/p')
[ -n "$t1" ] && [ "$t1" = "$t2" ] && [ "$t1" = "$t3" ]; ok $? "tree models instant/load and --tree-info agree: $t1 tasks"
done_testing
