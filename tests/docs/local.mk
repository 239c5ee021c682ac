# The documentation (issue 30): README.md and docs/ are checked by the test
# suite so they cannot drift from the code: links and variables
# (links.sh), every command marked runnable is run (runnable.sh), the man
# pages render and carry every option and variable (man.sh).
TESTS += %reldir%/links.sh %reldir%/runnable.sh %reldir%/man.sh
EXTRA_DIST += %reldir%/links.sh %reldir%/runnable.sh %reldir%/man.sh %reldir%/docs.py \
	docs/user-guide.md docs/algorithms.md docs/internals.md
