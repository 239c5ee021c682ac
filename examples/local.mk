# examples: build rules (see Makefile.am)
