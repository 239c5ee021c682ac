# tests/fuzz: libFuzzer targets of the control-message decoder and every
# algorithm's on_control, the piggyback header on the receive path and the
# TDSHIM_* parser (README.md there). fuzz.sh builds them with clang (skips
# without it) and runs each FUZZ_SECONDS: 20 in `make check`, an hour in
# `make fuzz-long` (part of `make check-long`).
TESTS += %reldir%/fuzz.sh
EXTRA_DIST += %reldir%/fuzz.sh %reldir%/fuzz-world.h %reldir%/fuzz-control.c %reldir%/fuzz-header.c \
	%reldir%/fuzz-config.c %reldir%/make-seeds.py %reldir%/README.md %reldir%/corpus
fuzz-long:
	FUZZ_SECONDS=3600 FUZZ_JOBS=3 $(MAKE) $(AM_MAKEFLAGS) check TESTS=%reldir%/fuzz.sh
.PHONY: fuzz-long
clean-local: clean-local-fuzz
clean-local-fuzz:
	rm -rf %reldir%/runs %reldir%/probe %reldir%/probe.c %reldir%/*.build.log \
		%reldir%/fuzz-control %reldir%/fuzz-header %reldir%/fuzz-config
.PHONY: clean-local-fuzz
