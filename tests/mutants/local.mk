# Mutants: every check must be able to fail (tests/mutants/run.sh builds a
# copy of the library with each mutant of mutants.ini and runs the test
# that must fail on it: make check-long-mutants, part of make check-long).
# make check only checks that every mutant still applies (catalogue.sh).
EXTRA_DIST += %reldir%/run.sh %reldir%/mutate.py %reldir%/mutants.ini %reldir%/catalogue.sh
TESTS += %reldir%/catalogue.sh
check-long-mutants: all
	$(MAKE) $(AM_MAKEFLAGS) check TESTS="%reldir%/run.sh"
.PHONY: check-long-mutants
