# tests/fuzz: libFuzzer targets of the control-message decoder and every
# algorithm's on_control, the piggyback header on the receive path and the
# TDSHIM_* parser and the report's JSON string writer (README.md there). fuzz.sh builds them with clang (skips
# without it) and runs each FUZZ_SECONDS: 5 in `make check`, an hour in
# `make fuzz-long` (part of `make check-long`).
TESTS += %reldir%/fuzz.sh
EXTRA_DIST += %reldir%/fuzz.sh %reldir%/fuzz-world.h %reldir%/fuzz-control.c %reldir%/fuzz-header.c \
	%reldir%/fuzz-config.c %reldir%/fuzz-json.c %reldir%/make-seeds.py %reldir%/README.md %reldir%/corpus
# make fuzz-long runs every target in FUZZ_LONG_TARGETS: a directory with
# a fuzzer of its own appends its long run there (FUZZ_LONG_TARGETS +=
# fuzz-long-NAME in its local.mk, included after this one in Makefile.am)
FUZZ_LONG_TARGETS = fuzz-long-fuzzers
fuzz-long: $(FUZZ_LONG_TARGETS)
fuzz-long-fuzzers:
	FUZZ_SECONDS=3600 FUZZ_JOBS=4 $(MAKE) $(AM_MAKEFLAGS) check TESTS=%reldir%/fuzz.sh
.PHONY: fuzz-long fuzz-long-fuzzers
clean-local: clean-local-fuzz
clean-local-fuzz:
	rm -rf %reldir%/runs %reldir%/probe %reldir%/probe.c %reldir%/*.build.log \
		%reldir%/fuzz-control %reldir%/fuzz-header %reldir%/fuzz-config %reldir%/fuzz-json
.PHONY: clean-local-fuzz
