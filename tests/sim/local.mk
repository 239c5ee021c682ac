# tests/sim: build rules (see Makefile.am)
