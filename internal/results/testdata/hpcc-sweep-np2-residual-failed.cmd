cwd: a fresh temporary directory on the 2-core x86_64 build machine, 2026-11-26 (hpccinf.txt written by runner.HPCCInput, copied alongside as hpcc-sweep-np2-residual-failed.hpccinf.txt; threshold line changed from 16.0 to 0.008 so that the N=400 point fails its residual check (0.0081691) and N=200 passes (0.0076117))
command: nice -n 19 mpirun --allow-run-as-root --oversubscribe -np 2 hpcc
blas: /usr/lib/x86_64-linux-gnu/blas/libblas.so.3 (Debian libblas3 3.11.0-2 reference BLAS, via update-alternatives; no OpenBLAS installed)
version: hpcc 1.5.0 (Debian hpcc 1.5.0-3), Open MPI 4.1.4 (Debian openmpi-bin 4.1.4-3+b1)
exit_status: wall 5.69 s, exit 0 (output file hpccoutf.txt copied whole to hpcc-sweep-np2-residual-failed.txt)
