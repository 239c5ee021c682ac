# tests/report: report tests (see Makefile.am)
