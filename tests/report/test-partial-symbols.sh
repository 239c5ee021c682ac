#!/bin/sh
# The partial report (shim/report/tdr_partial.c) is written in the handler
# of a killing signal, so it must name no allocator and no stdio function
# (nor strerror or the time formatting, which may allocate or lock). Read
# from the objects libtdshim.so is linked from (the build tree's libtool
# .o files), with nm:
#   1. tdr_partial.o exists and names none of them (nm -u);
#   2. so does tdr_record.o, the per-rank JSON it writes;
#   3. so does every other shim/report object those two reach, followed
#      symbol by symbol, with one exception: tdr_json.o's realloc, which
#      only a growable buffer reaches (the handler's buffers are fixed,
#      tdr_buf_fixed: tdr_json.h);
#   4. the functions of the core they call (td_type_name, ...) name none of
#      them either: the relocations inside each such function (objdump -t,
#      -r), since the core's objects also hold td_describe, which uses
#      snprintf, so whole objects would not do.
# A missing object fails (the test must not pass by finding nothing).
. "$top_srcdir/tests/tap.sh"
plan 4
R=$top_builddir/shim/report/.libs
C=$top_builddir/shim/core/.libs
NM=${NM:-nm}
OBJDUMP=${OBJDUMP:-objdump}
BAD='^(__)?(__isoc99_)?(malloc|calloc|realloc|reallocarray|free|cfree|memalign|posix_memalign|aligned_alloc|valloc|pvalloc|strdup|strndup|v?as?printf|v?f?printf|v?sn?printf|v?dprintf|v?f?s?scanf|open_memstream|fmemopen|getline|getdelim|fopen(64)?|fdopen|freopen(64)?|fclose|fflush(_unlocked)?|fwrite(_unlocked)?|fread(_unlocked)?|fputs(_unlocked)?|fputc(_unlocked)?|puts|putc(_unlocked)?|putchar(_unlocked)?|fgets(_unlocked)?|fgetc(_unlocked)?|getc(_unlocked)?|getchar(_unlocked)?|ungetc|perror|setvbuf|setbuf|tmpfile(64)?|stdin|stdout|stderr|_IO_[A-Za-z_]*|strerror(_r|_l)?|localtime(_r)?|gmtime(_r)?|ctime(_r)?|asctime(_r)?|strftime|tzset|syslog)(_chk)?$'

# undefined symbols of an object, without version suffixes
undef() { "$NM" -u "$1" | awk '{print $NF}' | sed 's/@.*//' | sort -u; }
# the forbidden ones among the names on stdin
bad() { grep -E "$BAD" || true; }
# the symbols the relocations inside function $2 of object $1 name: its
# section, start and size from the symbol table (objdump -t), then the
# relocations of that section whose offset falls inside it (objdump -r)
func_refs() {
    set -- $("$OBJDUMP" -t "$1" | awk -v s="$2" '$NF == s && $(NF-3) == "F" {print $(NF-2), $1, $(NF-1)}') "$1"
    [ $# -eq 4 ] || return 0
    "$OBJDUMP" -r -j "$1" "$4" | awk -v lo="$2" -v sz="$3" '
        function hex(h,   i, v) { v = 0; h = tolower(h); for (i = 1; i <= length(h); i++) v = v * 16 + index("0123456789abcdef", substr(h, i, 1)) - 1; return v }
        BEGIN { a = hex(lo); b = a + hex(sz) }
        $1 ~ /^[0-9a-f]+$/ && NF >= 3 { o = hex($1); if (o >= a && o < b) { n = $3; sub(/[-+].*/, "", n); print n } }' | sort -u
}
# the shim/report object (libtool's PIC .o) that defines symbol $1
# every defined symbol of the report's and the core's objects, one nm call
# each ("OBJECT TYPE NAME" lines): the lookups below read this table
DEFS=$(mktemp "${TMPDIR:-/tmp}/tdshim-defs.XXXXXX")
trap 'rm -f "$DEFS"' EXIT
"$NM" --defined-only -A "$R"/libtdshim_la-tdr*.o "$C"/*.o 2>/dev/null |
    awk '{o = $1; sub(/:[^:]*$/, "", o); print o, $(NF-1), $NF}' >"$DEFS"
definer() {
    awk -v s="$1" -v r="$R/libtdshim_la-tdr" '$3 == s && $2 ~ /^[TtDdRrBb]$/ && index($1, r) == 1 {print $1; exit}' "$DEFS"
}

missing=
for f in tdr_partial tdr_record tdr_json tdr_file; do
    [ -f "$R/libtdshim_la-$f.o" ] || missing="$missing $f"
done
[ -d "$C" ] && ls "$C"/td_engine.o >/dev/null 2>&1 || missing="$missing core"
grep -q ' tdr_write_partial$' "$DEFS" || missing="$missing (nm -A read no symbol table)"
if [ -n "$missing" ]; then
    for i in 1 2 3 4; do ok 1 "objects missing under $R or $C:$missing (build libtdshim first)"; done
    done_testing
fi

P=$R/libtdshim_la-tdr_partial.o
b=$(undef "$P" | bad | tr '\n' ' ')
[ -z "$b" ]
ok $? "tdr_partial.o names no allocator or stdio function (nm -u: $(undef "$P" | wc -l) symbols${b:+; found: $b})"

REC=$R/libtdshim_la-tdr_record.o
b=$(undef "$REC" | bad | tr '\n' ' ')
[ -z "$b" ]
ok $? "tdr_record.o (the JSON it writes) names none either${b:+ (found: $b)}"

# 3: the closure within shim/report, and the symbols it leaves to others
seen=" $P $REC "
todo="$P $REC"
outside=
st=0
while [ -n "$todo" ]; do
    next=
    for o in $todo; do
        for s in $(undef "$o"); do
            d=$(definer "$s")
            if [ -z "$d" ]; then
                outside="$outside $s"
                continue
            fi
            case "$seen" in *" $d "*) continue ;; esac
            seen="$seen$d "
            next="$next $d"
            b=$(undef "$d" | bad | tr '\n' ' ')
            [ "$(basename "$d")" = libtdshim_la-tdr_json.o ] && b=$(echo "$b" | sed 's/\brealloc\b//; s/^ *//; s/ *$//')
            if [ -n "$b" ]; then
                st=1
                diag "$(basename "$d") (reached through $s) names: $b"
            fi
        done
    done
    todo=$next
done
reached=$(for o in $seen; do basename "$o" .o | sed 's/^libtdshim_la-//'; done | sort | tr '\n' ' ' | sed 's/ $//')
ok $st "the shim/report objects they reach ($reached) name none either (tdr_json.o: realloc for growable buffers only)"

# 4: the core's functions they call, one by one (objdump -t, -r)
st=0
checked=
for s in $(echo "$outside" | tr ' ' '\n' | sort -u); do
    for o in "$C"/*.o; do
        case "$o" in */libtdcore_test_la-*) continue ;; esac
        t=$(awk -v s="$s" -v o="$o" '$1 == o && $3 == s {print $2}' "$DEFS")
        [ -n "$t" ] || continue
        case "$t" in
        T | t)
            checked="$checked $s"
            refs=$(func_refs "$o" "$s")
            b=$(echo "$refs" | bad | tr '\n' ' ')
            if [ -n "$b" ]; then st=1; diag "core function $s ($(basename "$o")) names: $b"; fi
            # a call into another function of the core would need following too
            other=$(echo "$refs" | grep -E '^td_' | grep -v "^$s\$" | tr '\n' ' ')
            if [ -n "$other" ]; then st=1; diag "core function $s calls $other: follow it (extend this test)"; fi
            ;;
        esac
    done
done
ok $st "the core functions they call (${checked# }) name none either, nor call further into the core"
done_testing
