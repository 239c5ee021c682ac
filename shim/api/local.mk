# shim/api: build rules (see Makefile.am)
