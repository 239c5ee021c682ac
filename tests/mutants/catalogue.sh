#!/bin/sh
# make check's part of the mutants (tests/mutants/run.sh runs them in make
# check-long-mutants): every mutant's text is still where the catalogue
# says, so that a change of the code it mutates changes the catalogue with it
exec "${PYTHON3:-python3}" "$top_srcdir/tests/mutants/mutate.py" "$top_srcdir/tests/mutants/mutants.ini" check "$top_srcdir"
