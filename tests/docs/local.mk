# The documentation (issue 30): README.md and docs/ are checked by the test
# suite so they cannot drift from the code: links and variables
# (links.sh), and every command marked runnable is run (runnable.sh).
TESTS += %reldir%/links.sh %reldir%/runnable.sh
EXTRA_DIST += %reldir%/links.sh %reldir%/runnable.sh %reldir%/docs.py \
	docs/user-guide.md docs/algorithms.md docs/internals.md
