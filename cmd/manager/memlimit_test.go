package main

import (
	"math"
	"runtime/debug"
	"testing"

	"github.com/go-logr/logr"
)

func TestSetMemoryLimit(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	for _, tc := range []struct {
		name, env, gomemlimit string
		want                  int64
	}{
		{name: "from the container's limit", env: "268435456", want: 241591910},
		{name: "GOMEMLIMIT wins", env: "268435456", gomemlimit: "100MiB", want: 0},
		{name: "no limit", want: 0},
		{name: "not a number", env: "256Mi", want: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			debug.SetMemoryLimit(math.MaxInt64)
			t.Setenv(memoryLimitEnv, tc.env)
			t.Setenv("GOMEMLIMIT", tc.gomemlimit)
			if got := setMemoryLimit(logr.Discard()); got != tc.want {
				t.Fatalf("setMemoryLimit() = %d, want %d", got, tc.want)
			}
			want := tc.want
			if want == 0 {
				want = math.MaxInt64
			}
			if got := debug.SetMemoryLimit(-1); got != want {
				t.Fatalf("the runtime's memory limit is %d, want %d", got, want)
			}
		})
	}
}
