# scripts: installed launcher and report tool (see Makefile.am)
