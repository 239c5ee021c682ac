"""tdshim_report: tables, comparisons and plots from a tdshim report directory
(the package behind scripts/tdshim-report).

A report directory holds one rank-NNNN.json per rank (schema tdshim-report/1,
see shim/report/SCHEMA.md) and rank 0's summary.txt. This tool re-derives its
tables from the JSON files alone, so it also works when only JSON was asked
for (TDSHIM_REPORT=json).

Reports are input from a program (and, in a shared directory, maybe from
another user): every file is opened without following symbolic links and
without blocking, must be a regular file of at most MAX_FILE bytes, and is
checked against shim/report/schema.json plus the limits below before any
table is printed; a bad one is rejected in one line naming the file and the
field. Strings from reports are printed with control characters escaped.
Output (plots, --html) goes only into directories the user owns, reached
through no other user's symbolic link, through names created with
O_EXCL|O_NOFOLLOW and renamed into place.

Modules, each importing only those above it:
  common    limits, ReportError, escaping of strings from reports
  validate  schema.json's subset of JSON Schema, the tool's own bounds
  load      reading rank files safely, finding a run, Run (its episodes)
  doc       the printed document: sections, lines and tables, as text
  tables    the tables of one run and of a comparison
  outdir    output directories and files that no other user can redirect
  plots     the PNG figures (matplotlib) and their layout for the tests
  page      the self-contained HTML page: summary first, real tables
  cli       the command line

Exit status: 0 success; 1 the directory holds no readable or valid report,
or an output could not be written; 2 usage error.
"""
