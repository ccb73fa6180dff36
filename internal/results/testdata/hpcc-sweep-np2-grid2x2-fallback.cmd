cwd: a fresh temporary directory on the 2-core x86_64 build machine, 2026-11-26 (hpccinf.txt written by runner.HPCCInput, copied alongside as hpcc-sweep-np2-grid2x2-fallback.hpccinf.txt; grids 1x2 and 2x2 on 2 ranks: HPL refuses the file (console: 'Need at least 4 processes for these tests'), HPCC runs its built-in defaults with Success=1)
command: nice -n 19 mpirun --allow-run-as-root --oversubscribe -np 2 hpcc
blas: /usr/lib/x86_64-linux-gnu/blas/libblas.so.3 (Debian libblas3 3.11.0-2 reference BLAS, via update-alternatives; no OpenBLAS installed)
version: hpcc 1.5.0 (Debian hpcc 1.5.0-3), Open MPI 4.1.4 (Debian openmpi-bin 4.1.4-3+b1)
exit_status: wall 164.94 s, exit 0 (output file hpccoutf.txt copied whole to hpcc-sweep-np2-grid2x2-fallback.txt)
