# libtdshim.so: the PMPI library users LD_PRELOAD (DESIGN.md §2, shim/mpi).
# The MPI entry points are generated from one list (shim/mpi/p2p.list) by
# gen_wrappers.py; the bodies they call are hand-written in shim/mpi/*.c.
lib_LTLIBRARIES += %reldir%/libtdshim.la
include_HEADERS += include/tdshim.h
%canon_reldir%_libtdshim_la_SOURCES = \
	%reldir%/mpi/tds_env.h %reldir%/mpi/tds_hdr.h \
	%reldir%/mpi/tds_config.h %reldir%/mpi/tds_config.c %reldir%/mpi/tds_state.h %reldir%/mpi/tds_state.c %reldir%/mpi/tds_pclock.c \
	%reldir%/mpi/tds_mt.h %reldir%/mpi/tds_mt.c %reldir%/mpi/tds_comm.h %reldir%/mpi/tds_comm.c \
	%reldir%/mpi/tds_req.h %reldir%/mpi/tds_req.c %reldir%/mpi/tds_wire.h \
	%reldir%/mpi/tds_progress.h %reldir%/mpi/tds_progress.c %reldir%/mpi/tds_recv.h %reldir%/mpi/tds_send.h \
	%reldir%/mpi/tds_flat.h %reldir%/mpi/tds_part.h %reldir%/mpi/tds_pair.h \
	%reldir%/mpi/tds_wire.c %reldir%/mpi/tds_send.c %reldir%/mpi/tds_recv.c %reldir%/mpi/tds_probe.c \
	%reldir%/mpi/tds_flat.c %reldir%/mpi/tds_pair.c %reldir%/mpi/tds_part.c \
	%reldir%/mpi/tds_complete.h %reldir%/mpi/tds_complete.c %reldir%/mpi/tds_start.c %reldir%/mpi/tds_init.c \
	%reldir%/mpi/tds_preload.h %reldir%/mpi/tds_preload.c %reldir%/mpi/tds_api.c \
	%reldir%/report/tdr.h %reldir%/report/tdr.c %reldir%/report/tdr_report.c %reldir%/report/tdr_callsite.c \
	%reldir%/report/tdr_json.h %reldir%/report/tdr_json.c %reldir%/report/tdr_file.h %reldir%/report/tdr_file.c \
	%reldir%/report/tdr_writer.h %reldir%/report/tdr_row.h %reldir%/report/tdr_clock.c %reldir%/report/tdr_record.c \
	%reldir%/report/tdr_summary.c %reldir%/report/tdr_advice.h %reldir%/report/tdr_advice.c \
	%reldir%/report/tdr_partial.c %reldir%/report/tdr_text.c
nodist_%canon_reldir%_libtdshim_la_SOURCES = %reldir%/mpi/tds_wrappers.c %reldir%/mpi/tds_bodies.h
%canon_reldir%_libtdshim_la_CPPFLAGS = $(AM_CPPFLAGS) -DTDS_IN_SHIM -I$(top_srcdir)/%reldir%/mpi -I$(top_builddir)/%reldir%/mpi \
	-I$(top_srcdir)/%reldir%/report $(MPI_CFLAGS)
%canon_reldir%_libtdshim_la_CFLAGS = $(AM_CFLAGS) $(SHIM_OPT_CFLAGS)
# -version-info: a preloaded library, but keep libtool's versioned soname
%canon_reldir%_libtdshim_la_LDFLAGS = $(AM_LDFLAGS) -version-info 0:0:0 -no-undefined -Wl,-z,defs \
	-export-symbols-regex '^(P?MPI_|tdshim_)'
%canon_reldir%_libtdshim_la_LIBADD = %reldir%/core/libtdcore.la $(MPI_LIBS) $(UNWIND_LIBS) $(DL_LIBS) -lpthread -lm

# every object includes the generated header (no BUILT_SOURCES needed)
$(%canon_reldir%_libtdshim_la_OBJECTS): %reldir%/mpi/tds_bodies.h
CLEANFILES += %reldir%/mpi/tds_wrappers.c %reldir%/mpi/tds_bodies.h
EXTRA_DIST += %reldir%/mpi/p2p.list %reldir%/mpi/gen_wrappers.py %reldir%/mpi/p2p-family.sh
DISTCLEANFILES += %reldir%/mpi/unknown.list
%reldir%/mpi/tds_bodies.h: %reldir%/mpi/tds_wrappers.c
# unknown.list: configure's (the MPI library's point-to-point functions the list lacks)
%reldir%/mpi/tds_wrappers.c: $(top_srcdir)/%reldir%/mpi/p2p.list $(top_srcdir)/%reldir%/mpi/gen_wrappers.py \
		$(wildcard %reldir%/mpi/unknown.list)
	$(AM_V_GEN)$(MKDIR_P) %reldir%/mpi && \
	$(PYTHON3) $(top_srcdir)/%reldir%/mpi/gen_wrappers.py $(top_srcdir)/%reldir%/mpi/p2p.list \
		%reldir%/mpi/tds_wrappers.c.tmp %reldir%/mpi/tds_bodies.h.tmp \
		$$(test -f %reldir%/mpi/unknown.list && echo %reldir%/mpi/unknown.list) && \
	mv %reldir%/mpi/tds_bodies.h.tmp %reldir%/mpi/tds_bodies.h && \
	mv %reldir%/mpi/tds_wrappers.c.tmp %reldir%/mpi/tds_wrappers.c
