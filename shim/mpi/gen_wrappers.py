#!/usr/bin/env python3
"""Generate the MPI entry points of libtdshim from p2p.list (mpiP-style).

usage: gen_wrappers.py p2p.list out.c out.h [unknown.list]
       gen_wrappers.py --names p2p.list     the functions of the list
       gen_wrappers.py --optional p2p.list  those configure checks for

out.h declares the hand-written bodies, so a body whose signature drifts
from the list fails to compile.

Each list line is "KIND PROTOTYPE". Every function gets two entry points,
MPI_<Name> and PMPI_<Name>, that run one shared body (README "Stacking with
other PMPI tools and Fortran"):
  - tdshim does its work where the call first reaches it: MPI_<Name> from a
    C program, PMPI_<Name> from a tool preloaded before tdshim (its wrapper
    calls PMPI_<Name>) or from the MPI library's Fortran bindings (Open MPI's
    mpif.h, use mpi and use mpi_f08 bindings convert the handles and call
    PMPI_<Name>);
  - MPI_<Name> hands the call to the next layer's MPI_<Name> when a tool
    preloaded after tdshim defines one (tds_next_<Name>, found at load time):
    that tool's wrapper then calls PMPI_<Name>, which is tdshim's;
  - tdshim's own calls go to the next layer's PMPI_<Name> (tds_real_<Name>,
    dlsym(RTLD_NEXT) at load time): the generated header redirects every
    PMPI_<Name> of the list in tdshim's sources to it, so they never re-enter
    tdshim's own PMPI_<Name>. A re-entered entry point (tds_inside: a call
    made while tdshim works, such as the MPI library's PMPI_Sendrecv inside
    its own MPI_Sendrecv_replace) passes straight through.
KIND:
  body      tds_body_<Name>() when the shim is on and not re-entered, else PMPI;
            under MPI_THREAD_MULTIPLE holding tdshim's lock (tds_mt.c), a
            path of its own so that the single-threaded one (tds.fast)
            tests the same one flag as before threads were supported
  fast      as body, but MPI_<Name> is one jump through the hidden pointer
            tds_ep_<Name>: tds_wrap_<Name> (the body entry above) until
            tds_fast_select() (tds_flat.c) installs, at MPI_Init, a flat
            entry written for the configuration (issue 28: the header-free
            send and receive in a few tens of instructions, chosen once,
            not tested on every call); it falls back to tds_wrap_<Name>
  always    tds_body_<Name>() unconditionally (Init, Finalize)
  activity  a collective: tds_activity() then PMPI (DESIGN.md §1)
  collective  a blocking collective: as activity, then tds_blocking() (the
            algorithm's last word before the rank blocks where tdshim takes
            no control message: td_blocking), then the MPI library's own
            collective, whose results are native's byte for byte
            (tests/mpi/collsum.sh; the nonblocking form polled, as xulau's and
            bcjrd's ran until 2026-11-29, sums doubles in another order)
  large     an MPI-4.0 large-count form MPI_<Base>_c: the body of MPI_<Base>
            with its MPI_Count counts as int; a count beyond an int is sent
            or received as 1 of a contiguous type of that many elements of
            its datatype (tds_count_int), so any count works (DESIGN.md
            section 7, "Do no harm"); each MPI_Count is followed by its
            datatype (MPI_Buffer_*_c have bodies of their own)
  pass      the next layer's function, unchanged: a call on a request tdshim
            already knows that sends or receives nothing of its own
            (MPI_Pready*, MPI_Parrived: partitions of a counted message)
  refuse    a point-to-point function tdshim cannot carry yet: at its first
            use with the shim on, one line naming it (the text after '#' on
            its list line says why) and the job stops (DESIGN.md §7, "Do no
            harm": no message reaches the wire without tdshim knowing)
A KIND ending in '?' (body?, large?, refuse?, pass?) marks an MPI-4.0
function: configure checks for it (AC_CHECK_FUNCS, --optional) and its entry
points and load-time lookup are compiled only under HAVE_MPI_<NAME>; its
body's prototype, its tds_real_/tds_next_ pointers and the PMPI_<Name>
redirection are not, so a body compiles against any MPI (the pointer is
never called where the library lacks the function). unknown.list (written by configure)
names the point-to-point functions the MPI library exports that the list
lacks: each gets an MPI_ and a PMPI_ symbol that stops at first use.
"""
import re
import sys

# The calls that can match a message already in the MPI library's queue of
# unexpected messages (post a receive, or take a message by a matched
# probe): tdshim's own calls of them forget the message a found MPI_Iprobe
# saw (tds_probed, tds_probe.c), so that a flat MPI_Recv takes the blocking
# call only while that message is surely still there (tds_flat.c,
# tds_probed_covers). The program's calls of them reach tdshim's bodies, which
# call these; MPI_Mrecv/MPI_Imrecv take a message already matched.
MATCHING = {'Recv', 'Irecv', 'Sendrecv', 'Sendrecv_replace', 'Start', 'Startall', 'Mprobe', 'Improbe',
            'Isendrecv', 'Isendrecv_replace'}


KINDS = ('body', 'fast', 'always', 'activity', 'collective', 'large', 'refuse', 'pass')


def parse(line):
    line, _, why = line.partition(' #')
    kind, proto = line.split(None, 1)
    optional = kind.endswith('?')
    kind = kind.rstrip('?')
    m = re.match(r'^(\w[\w\s\*]*?)\s*\bMPI_(\w+)\((.*)\)$', proto.strip())
    if not m or kind not in KINDS or (optional and kind not in ('body', 'large', 'refuse', 'pass')):
        raise SystemExit('gen_wrappers.py: cannot parse: ' + line)
    ret, name, params = m.group(1).strip(), m.group(2), m.group(3).strip()
    args = []
    variadic = False
    if params != 'void':
        for p in params.split(','):
            p = p.strip()
            if p == '...':
                variadic = True
                continue
            a = re.search(r'(\w+)\s*(\[\s*\])?$', p)
            if not a:
                raise SystemExit('gen_wrappers.py: no parameter name in: ' + p)
            args.append(a.group(1))
    if kind == 'large' and not name.endswith('_c'):
        raise SystemExit('gen_wrappers.py: a large-count form ends in _c: ' + line)
    return dict(kind=kind, ret=ret, name=name, params=params, args=args, variadic=variadic,
                optional=optional, why=why.strip())


def guard(name):
    """the configure result for an MPI-4.0 function (AC_CHECK_FUNCS)"""
    return 'HAVE_MPI_' + name.upper()


def large_body(fn, base):
    """tds_large_<Name>_c: the MPI_Count parameters of a large-count form as
    int for the body of its base (the same parameters otherwise). A count
    beyond an int becomes 1 of a contiguous type of that many elements of
    the datatype that follows it (tds_count_int: one message on the wire,
    with the same type signature), freed after the call (MPI keeps it while
    an operation or a persistent request uses it; tdshim's own receive
    keeps a duplicate)."""
    name, ret = fn['name'], fn['ret']
    params = [p.strip() for p in fn['params'].split(',')]
    out = ['static inline %s tds_large_%s(%s)' % (ret, name, ', '.join(params)), '{']
    call, back = list(fn['args']), []
    for i, (p, a) in enumerate(zip(params, fn['args'])):
        if 'MPI_Count' not in p:
            continue
        if '*' in p or i + 1 == len(params) or not params[i + 1].startswith('MPI_Datatype '):
            raise SystemExit('gen_wrappers.py: %s: an MPI_Count not followed by its datatype (%s): '
                             'give it a body of its own' % (name, p))
        t = fn['args'][i + 1]
        out += ['    MPI_Datatype %s_big = MPI_DATATYPE_NULL;' % a,
                '    int %s_int = __builtin_expect(%s <= INT_MAX && %s >= 0, 1) ? (int)%s'
                % (a, a, a, a),
                '                 : %s < 0 && %s >= INT_MIN ? (int)%s : tds_count_int(%s, &%s, &%s_big);'
                % (a, a, a, a, t, a)]
        call[i] = '%s_int' % a
        back += ['    if (%s_big != MPI_DATATYPE_NULL)' % a, '        PMPI_Type_free(&%s_big);' % a]
    out.append('    %s rc = tds_body_%s(%s);' % (ret, base, ', '.join(call)))
    out += back + ['    return rc;', '}', '']
    return out


# The blocking completion calls, whose bodies look at no held work when
# they complete at once: after the body, the core's request for the
# control channel (td_ctx.want_poll; tds_progress.h, tds_after_body). The
# Test* and probe calls see it at entry (tds.nheld); the sends and the flat
# blocking receives call it themselves.
AFTER_BODY = {'Recv', 'Mrecv', 'Wait', 'Waitall', 'Waitany', 'Waitsome', 'Sendrecv', 'Sendrecv_replace',
              'Probe', 'Mprobe'}


def emit(fn, funcs):
    kind, ret, name, params, args = fn['kind'], fn['ret'], fn['name'], fn['params'], fn['args']
    after = ['    tds_after_body();'] if name in AFTER_BODY else []
    fast = kind == 'fast'
    if fast:
        kind = 'body'
    call = ', '.join(args)
    pre = []
    body = 'tds_body_%s(%s)' % (name, call)
    if kind == 'large':
        base = name[:-2]
        bkind = next((f['kind'] for f in funcs if f['name'] == base), None)
        if bkind not in ('body', 'fast', 'refuse'):
            raise SystemExit('gen_wrappers.py: %s: MPI_%s is not in the list as body or refuse' % (name, base))
        if bkind == 'refuse':
            kind = 'refuse'
            fn = dict(fn, why=next(f['why'] for f in funcs if f['name'] == base))
        else:
            kind = 'body'
            pre = large_body(fn, base)
            body = 'tds_large_%s(%s)' % (name, call)
    bparams = ', '.join(p.strip() for p in params.split(',') if p.strip() != '...')
    real = 'tds_real_%s(%s)' % (name, call)
    # tds_entry_<Name>: the work, reached from MPI_<Name> (no tool after
    # tdshim) and from PMPI_<Name>
    out = ['static %s tds_entry_%s(%s)' % (ret, name, bparams), '{']
    if kind == 'pass':
        out += ['    return %s;' % real]
    elif kind == 'refuse':
        out += ['    if (TDS_BYPASS())',
                '        return %s;' % real,
                '    tds_refuse("MPI_%s", "%s");' % (name, fn['why'] or 'not supported by tdshim')]
    elif kind == 'activity':
        out += ['    if (!TDS_BYPASS()) {',
                '        tds_lock_coll();',
                '        tds_activity();',
                '        tds_unlock();',
                '    }',
                '    return %s;' % real]
    elif kind == 'collective':
        out += ['    if (!TDS_BYPASS()) {',
                '        tds_lock_coll();',
                '        tds_activity();',
                '        tds_blocking();',
                '        tds_unlock();',
                '    }',
                '    return %s;' % real]
    elif kind == 'always':
        out += ['    return tds_body_%s(%s);' % (name, call)]
    else:
        out += ['    if (TDS_BYPASS())',
                '        return %s;' % real,
                '    tds_inside = 1;',
                '    tds_lock();',
                '    %s rc = %s;' % (ret, body)] + after + [
                '    tds_unlock();',
                '    tds_inside = 0;',
                '    return rc;']
    out += ['}', '']
    pmpi = ['#undef PMPI_%s' % name,
            '%s PMPI_%s(%s)' % (ret, name, params), '{',
            '    return tds_entry_%s(%s);' % (name, call), '}', '']
    if kind == 'body':
        # the slow path in a function of its own, so that the fast one
        # saves no registers for it; tds.fast is 0 when a tool follows
        out[0] = 'static __attribute__((noinline)) ' + out[0][len('static '):]
        out += ['static __attribute__((noinline, cold)) %s tds_slow_%s(%s)' % (ret, name, bparams), '{',
                '    if (tds_next_%s)' % name,
                '        return tds_next_%s(%s);' % (name, call),
                '    return tds_entry_%s(%s);' % (name, call),
                '}', '',
                '%s %s%s(%s)' % (ret, 'tds_wrap_' if fast else 'MPI_', name, params), '{',
                '    if (__builtin_expect(!tds.fast || tds_inside, 0))',
                '        return tds_slow_%s(%s);' % (name, call),
                '    tds_inside = 1;',
                '    %s rc = %s;' % (ret, body)] + after + [
                '    tds_inside = 0;',
                '    return rc;', '}', '']
        if fast:
            out += [pointer(name, ret, params, 'tds_ep_') + ' = tds_wrap_%s;' % name, '',
                    '%s MPI_%s(%s)' % (ret, name, params), '{',
                    '    return tds_ep_%s(%s);' % (name, call), '}', '']
    else:
        out += ['%s MPI_%s(%s)' % (ret, name, params), '{',
                '    if (tds_next_%s)' % name,
                '        return tds_next_%s(%s);' % (name, call),
                '    return tds_entry_%s(%s);' % (name, call), '}', '']
    out = pre + out + pmpi
    if fn['optional']:
        out = ['#ifdef ' + guard(name)] + out + ['#endif /* %s */' % guard(name), '']
    return '\n'.join(out)


def pointer(name, ret, bparams, prefix):
    # hidden: a direct RIP-relative load on the fast path, no GOT entry
    return '__attribute__((visibility("hidden"))) %s (*%s%s)(%s)' % (ret, prefix, name, bparams)


def read_list(src):
    funcs = []
    with open(src) as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith('#'):
                funcs.append(parse(line))
    return funcs


def unknown_entries(path):
    """an MPI_ and a PMPI_ symbol for each function of unknown.list; their C
    names differ (asm labels), so mpi.h's prototypes do not clash with them"""
    out = ['/* the point-to-point functions of this MPI library that p2p.list lacks',
           ' * (configure, unknown.list): stop at first use */']
    if not path:
        return out
    with open(path) as f:
        names = [l.strip() for l in f if l.strip()]
    for n in names:
        if not re.match(r'^MPI_\w+$', n):
            raise SystemExit('gen_wrappers.py: not an MPI function name in %s: %s' % (path, n))
        for p in ('', 'P'):
            out += ['int tds_unknown_%s%s(void) __asm__("%s%s");' % (p, n, p, n),
                    'int tds_unknown_%s%s(void)' % (p, n), '{',
                    '    tds_refuse("%s", "tdshim does not know this function of the MPI library '
                    '(configure warned)");' % n, '}', '']
    return out


def main():
    if sys.argv[1] in ('--names', '--optional'):
        for fn in read_list(sys.argv[2]):
            if sys.argv[1] == '--names' or fn['optional']:
                print('MPI_' + fn['name'])
        return
    src, dst, hdr = sys.argv[1], sys.argv[2], sys.argv[3]
    unknown = sys.argv[4] if len(sys.argv) > 4 else None
    funcs = read_list(src)
    parts = ['/* Generated by gen_wrappers.py from p2p.list: do not edit. */',
             '#define _GNU_SOURCE /* RTLD_NEXT */',
             '#define TDS_WRAPPERS_C /* tds_bodies.h: no PMPI_* redirection here */',
             '#include "config.h"',
             '#include <dlfcn.h>',
             '#include <limits.h>',
             '#include <stdio.h>',
             '#include <stdlib.h>',
             '#include "tds_mt.h"', '#include "tds_progress.h"',
             '#include "tds_bodies.h"',
             '']
    decls = ['/* Generated by gen_wrappers.py from p2p.list: do not edit. */',
             '#ifndef TDS_BODIES_H', '#define TDS_BODIES_H', '#include "config.h"', '#include <mpi.h>', '#include <stddef.h>',
             'void tds_activity(void);', 'void tds_blocking(void);',
             '/* the next layer (gen_wrappers.py): its PMPI_<Name>, and its MPI_<Name>',
             ' * when a tool preloaded after tdshim defines one (else NULL) */',
             'extern int tds_stacked; /* some tool follows tdshim (tds.fast is then 0) */',
             'extern char tds_stacked_lib[256]; /* the first such tool */',
             '/* one line naming a function tdshim cannot carry (why), and the job stops */',
             '__attribute__((noreturn, cold)) void tds_refuse(const char *name, const char *why);',
             '/* a large count beyond an int as 1 of a contiguous type of n x *type (*type',
             ' * and *big set to it), or a negative one as -1 (MPI\'s error) */',
             '__attribute__((cold)) int tds_count_int(MPI_Count n, MPI_Datatype *type, MPI_Datatype *big);',
             '/* the envelope of the message the last found MPI_Iprobe or MPI_Probe saw',
             ' * (tds_probe.c), until a call that can match it: (MPI_Comm)0, no',
             ' * communicator, when none; relaxed atomics (tds_probed_set); its bytes',
             ' * as the program sees them (SIZE_MAX: unknown) */',
             'typedef struct { MPI_Comm comm; int source, tag; size_t bytes; } tds_probed_t;',
             'extern __attribute__((visibility("hidden"))) tds_probed_t tds_probed;',
             '#define tds_probed_set(field, v) __atomic_store_n(&tds_probed.field, (v), __ATOMIC_RELAXED)',
             '#define tds_probed_get(field) __atomic_load_n(&tds_probed.field, __ATOMIC_RELAXED)',
             '/* a plain read, for the flat entries (tds.fast: no thread calls MPI beside',
             ' * them): the compiler folds it into a comparison, as no atomic */',
             '#define tds_probed_peek(field) (tds_probed.field)']
    redirect = ['/* tdshim calls the next layer directly, never its own PMPI_<Name>; a',
                ' * call that can match a message already there (MATCHING) first forgets',
                ' * the one a found MPI_Iprobe saw (tds_probe.c, tds_probed) */',
                '#ifndef TDS_WRAPPERS_C']
    ptrs, resolve = [], []
    for fn in funcs:
        kind, ret, name, params = fn['kind'], fn['ret'], fn['name'], fn['params']
        bparams = ', '.join(p.strip() for p in params.split(',') if p.strip() != '...')
        g = (['#ifdef ' + guard(name)], ['#endif']) if fn['optional'] else ([], [])
        if kind == 'fast':
            decls += ['__attribute__((visibility("hidden"))) %s tds_wrap_%s(%s);' % (ret, name, bparams),
                      'extern ' + pointer(name, ret, params, 'tds_ep_') + ';']
        if kind in ('body', 'fast', 'always'):
            # unguarded: a body of an MPI-4.0 function (MPI_Isendrecv) is
            # compiled against any MPI, reached only where the library has it
            decls += ['%s tds_body_%s(%s);' % (ret, name, bparams)]
        # the pointers keep a variadic function variadic (MPI_Pcontrol)
        decls += ['extern ' + pointer(name, ret, params, 'tds_real_') + ';',
                  'extern ' + pointer(name, ret, params, 'tds_next_') + ';']
        if name in MATCHING:
            redirect += ['#define PMPI_%s (tds_probed_set(comm, (MPI_Comm)0), *tds_real_%s)' % (name, name)]
        else:
            redirect += ['#define PMPI_%s (*tds_real_%s)' % (name, name)]
        ptrs += [pointer(name, ret, params, 'tds_real_') + ';',
                 pointer(name, ret, params, 'tds_next_') + ';']
        resolve += g[0] + [
            '    tds_real_%s = (%s (*)(%s))need("PMPI_%s");' % (name, ret, params, name),
            '    tds_next_%s = (%s (*)(%s))next_tool("MPI_%s", (void *)tds_real_%s);'
            % (name, ret, params, name, name)] + g[1]
        parts.append(emit(fn, funcs))
    parts += unknown_entries(unknown)
    redirect.append('#endif')
    decls += redirect
    decls.append('#endif')
    parts += ptrs
    parts += ['int tds_stacked;', 'char tds_stacked_lib[256];', '',
              '/* the next layer\'s PMPI_<Name>: the MPI library, which tdshim links */',
              'static void *need(const char *name)',
              '{',
              '    void *f = dlsym(RTLD_NEXT, name);',
              '    if (!f) {',
              '        fprintf(stderr, "tdshim: %s not found after libtdshim in the library search order (%s)\\n", name, dlerror());',
              '        abort();',
              '    }',
              '    return f;',
              '}',
              '',
              '/* the next MPI_<Name> if a tool preloaded after tdshim defines it: one',
              ' * that does not live in the object of the next PMPI_<Name>, and is not',
              ' * an alias of its own object\'s PMPI_<Name> (the MPI library\'s; a layer',
              ' * after tdshim that defines PMPI_<Name> only makes the next PMPI_<Name>',
              ' * its own, and the program\'s MPI_<Name> must still reach tdshim:',
              ' * tests/mpi/stack.sh, libponly) */',
              'static void *next_tool(const char *name, void *real)',
              '{',
              '    Dl_info a, b;',
              '    void *f = dlsym(RTLD_NEXT, name);',
              '    if (!f || f == real || (dladdr(f, &a) && dladdr(real, &b) && a.dli_fbase == b.dli_fbase))',
              '        return NULL;',
              '    if (dladdr(f, &a) && a.dli_fname) {',
              '        void *h = dlopen(a.dli_fname, RTLD_LAZY | RTLD_NOLOAD);',
              '        char pname[80];',
              '        snprintf(pname, sizeof pname, "P%s", name);',
              '        void *p = h ? dlsym(h, pname) : NULL;',
              '        if (h)',
              '            dlclose(h);',
              '        if (p == f)',
              '            return NULL;',
              '    }',
              '    if (!tds_stacked && dladdr(f, &a) && a.dli_fname)',
              '        snprintf(tds_stacked_lib, sizeof tds_stacked_lib, "%s", a.dli_fname);',
              '    tds_stacked = 1;',
              '    return f;',
              '}',
              '',
              '/* before any MPI call: preloaded libraries are initialised before the',
              ' * program and its other libraries */',
              'static __attribute__((constructor(101))) void tds_resolve_next(void)',
              '{'] + resolve + ['}', '']
    with open(dst, 'w') as f:
        f.write('\n'.join(parts))
    with open(hdr, 'w') as f:
        f.write('\n'.join(decls) + '\n')


if __name__ == '__main__':
    main()
