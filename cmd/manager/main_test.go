package main

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	"github.com/vmbench/vmbench/internal/metrics"
)

func validOptions() options {
	return options{pullPolicy: "IfNotPresent", vmNetwork: "auto", emulation: "allow", masterKeySecret: "vmbench-system/vmbench-master-key",
		metricsOpts: metrics.DefaultOptions(), minScheduleInterval: 5 * time.Minute}
}

func TestMasterKeySecretFlag(t *testing.T) {
	o := validOptions()
	got, err := o.masterKey()
	if err != nil || got != (types.NamespacedName{Namespace: "vmbench-system", Name: "vmbench-master-key"}) {
		t.Errorf("masterKey() = %v, %v", got, err)
	}
	for _, bad := range []string{"", "vmbench-master-key", "/name", "ns/", "Bad_NS/name", "ns/name with space"} {
		o.masterKeySecret = bad
		if err := o.validate(); err == nil || !strings.Contains(err.Error(), "--master-key-secret") {
			t.Errorf("--master-key-secret=%q: %v, want a refusal naming the flag", bad, err)
		}
	}
}

func TestWatchNamespacesFlag(t *testing.T) {
	for flag, want := range map[string]map[string]cache.Config{
		"":              nil,
		" ":             nil,
		"team-a":        {"team-a": {}},
		"team-a,team-b": {"team-a": {}, "team-b": {}},
		"team-a, b":     {"team-a": {}, "b": {}},
	} {
		o := validOptions()
		o.watchNamespaces = flag
		got, err := o.namespaces()
		if err != nil {
			t.Errorf("--watch-namespaces=%q: %v", flag, err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("--watch-namespaces=%q (-want +got):\n%s", flag, diff)
		}
	}
	for _, bad := range []string{"team-a,,team-b", "Team_A", "team-a,"} {
		o := validOptions()
		o.watchNamespaces = bad
		if err := o.validate(); err == nil || !strings.Contains(err.Error(), "--watch-namespaces") {
			t.Errorf("--watch-namespaces=%q: %v, want a refusal naming the flag", bad, err)
		}
	}
}

func TestMaxActiveRunsFlag(t *testing.T) {
	for _, ok := range []int{0, 1, 4} {
		o := validOptions()
		o.maxActiveRuns = ok
		if err := o.validate(); err != nil {
			t.Errorf("--max-active-runs=%d: %v", ok, err)
		}
	}
	o := validOptions()
	o.maxActiveRuns = -1
	if err := o.validate(); err == nil || !strings.Contains(err.Error(), "--max-active-runs") {
		t.Errorf("--max-active-runs=-1: %v, want a refusal naming the flag", err)
	}
}

func TestMetricsCertDirFlag(t *testing.T) {
	o := validOptions()
	o.metricsOpts.CertDir = t.TempDir()
	if err := o.validate(); err == nil || !strings.Contains(err.Error(), "--metrics-cert-dir") {
		t.Errorf("validate() with a cert dir without a certificate = %v, want an error naming --metrics-cert-dir", err)
	}
}

func TestQueueLimitFlags(t *testing.T) {
	for _, ok := range []int{0, 1, 3} {
		o := validOptions()
		o.maxActiveRunsPerNS = ok
		if err := o.validate(); err != nil {
			t.Errorf("--max-active-runs-per-namespace=%d: %v", ok, err)
		}
	}
	o := validOptions()
	o.maxActiveRunsPerNS = -1
	if err := o.validate(); err == nil || !strings.Contains(err.Error(), "--max-active-runs-per-namespace") {
		t.Errorf("--max-active-runs-per-namespace=-1: %v, want a refusal naming the flag", err)
	}
	o = validOptions()
	o.maxSuiteDuration = -time.Hour
	if err := o.validate(); err == nil || !strings.Contains(err.Error(), "--max-suite-duration") {
		t.Errorf("--max-suite-duration=-1h: %v, want a refusal naming the flag", err)
	}
}
