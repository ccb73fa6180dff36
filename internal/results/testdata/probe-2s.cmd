command: runner.RunProbe(ctx, 2*time.Second) (internal/runner/probe.go), called from a throwaway test
version: vmbench's runner of this commit, Go 1.x, not in a VM
date: 2026-11-29T15:40:00Z
host: Linux x86_64, nproc=2 shared with other builds
exit_status: 0
