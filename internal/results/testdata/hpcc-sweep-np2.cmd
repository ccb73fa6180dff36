cwd: a fresh temporary directory on the 2-core x86_64 build machine, 2026-11-26 (hpccinf.txt written by runner.HPCCInput, copied alongside as hpcc-sweep-np2.hpccinf.txt)
command: nice -n 19 mpirun --allow-run-as-root --oversubscribe -np 2 hpcc
blas: /usr/lib/x86_64-linux-gnu/blas/libblas.so.3 (Debian libblas3 3.11.0-2 reference BLAS, via update-alternatives; no OpenBLAS installed)
version: hpcc 1.5.0 (Debian hpcc 1.5.0-3), Open MPI 4.1.4 (Debian openmpi-bin 4.1.4-3+b1)
exit_status: wall 6.55 s, exit 0 (output file hpccoutf.txt copied whole to hpcc-sweep-np2.txt)
