# shim: build rules (see Makefile.am)
