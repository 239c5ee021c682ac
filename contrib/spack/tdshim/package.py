# Spack package for tdshim (issue 13). Copy this directory into a Spack
# repository (spack repo create; cp -r contrib/spack/tdshim <repo>/packages/)
# and set the url/sha256 of the release tarball made by `make dist`.
# Not tested against Spack here (no Spack on the build machines).
from spack.package import *

class Tdshim(AutotoolsPackage):
    """Termination detection for unmodified asynchronous MPI programs: a PMPI
    library users LD_PRELOAD (tdshim-run) to be told when the job is quiescent."""

    homepage = "https://example.invalid/tdshim"
    url = "https://example.invalid/tdshim/tdshim-0.1.0.tar.gz"

    version("0.1.0", sha256="0000000000000000000000000000000000000000000000000000000000000000")

    variant("callsites", default=True, description="call-site reports (TDSHIM_CALLSITES) with libunwind")

    depends_on("c", type="build")
    depends_on("mpi@3:")
    depends_on("python@3:", type=("build", "run"))  # the wrapper generator; tdshim-report
    depends_on("libunwind", when="+callsites")

    def configure_args(self):
        args = [
            "MPICC={0}".format(self.spec["mpi"].mpicc),
            "MPIRUN={0}".format(join_path(self.spec["mpi"].prefix.bin, "mpiexec")),
        ]
        args += self.with_or_without("libunwind", variant="callsites")
        return args
