# tests/mpi: build rules (see Makefile.am)
