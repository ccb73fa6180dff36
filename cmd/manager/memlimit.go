package main

import (
	"os"
	"runtime/debug"
	"strconv"

	"github.com/go-logr/logr"
)

// memoryLimitEnv holds the container's memory limit in bytes; the chart and the kustomize install
// set it from the container's resources (resourceFieldRef limits.memory).
const memoryLimitEnv = "VMBENCH_MEMORY_LIMIT"

// memoryLimitShare is the part of the container's limit the Go heap aims to stay under, the rest
// left to the stacks, the runtime and what the kernel counts besides.
const memoryLimitShare = 0.9

// setMemoryLimit makes the Go collector work harder as the heap nears the container's memory limit,
// instead of letting it double (GOGC) past the limit and the container be OOM-killed. An explicit
// GOMEMLIMIT wins. It returns the limit set, or 0.
func setMemoryLimit(log logr.Logger) int64 {
	if os.Getenv("GOMEMLIMIT") != "" {
		log.Info("memory limit from GOMEMLIMIT", "GOMEMLIMIT", os.Getenv("GOMEMLIMIT"))
		return 0
	}
	raw := os.Getenv(memoryLimitEnv)
	if raw == "" {
		return 0
	}
	limit, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || limit <= 0 {
		log.Info("ignoring "+memoryLimitEnv+": not a number of bytes; set it from the container's limits.memory "+
			"(resourceFieldRef) or set GOMEMLIMIT", memoryLimitEnv, raw)
		return 0
	}
	soft := int64(float64(limit) * memoryLimitShare)
	debug.SetMemoryLimit(soft)
	log.Info("Go memory limit set from the container's limit", "limitBytes", limit, "goMemLimitBytes", soft)
	return soft
}
