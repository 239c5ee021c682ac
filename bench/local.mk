# bench: build rules (see Makefile.am)
