package suite

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/utils/ptr"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/controllers/scheme"
)

// storedSuites is a list as the API server sends it to the manager's informer: one good suite, and
// one stored with a timeout Go cannot parse, before the CRD refused such values.
const storedSuites = `{
  "apiVersion": "vmbench.io/v1alpha1",
  "kind": "BenchmarkSuiteList",
  "metadata": {"resourceVersion": "42"},
  "items": [
    {"apiVersion": "vmbench.io/v1alpha1", "kind": "BenchmarkSuite",
     "metadata": {"name": "good", "namespace": "a"},
     "spec": {"timeout": "6h", "benchmarks": [{"name": "cpu", "type": "sysbench-cpu", "timeout": "30m", "sysbenchCPU": {"duration": "10s"}}]}},
    {"apiVersion": "vmbench.io/v1alpha1", "kind": "BenchmarkSuite",
     "metadata": {"name": "typo", "namespace": "b"},
     "spec": {"timeout": "1d", "benchmarks": [{"name": "cpu", "type": "sysbench-cpu", "timeout": "30m"}]}}
  ]
}`

// One tenant's bad duration no longer stops the decoding of every suite (C1): the list decodes, and
// only the bad suite is refused, with a message that names the field and the fix.
func TestStoredBadDurationFailsOnlyItsSuite(t *testing.T) {
	codecs := serializer.NewCodecFactory(scheme.New())
	list := &vmbenchv1.BenchmarkSuiteList{}
	if _, _, err := codecs.UniversalDeserializer().Decode([]byte(storedSuites), nil, list); err != nil {
		t.Fatalf("decoding the list through the manager's scheme: %v", err)
	}
	if len(list.Items) != 2 {
		t.Fatalf("decoded %d suites, want 2", len(list.Items))
	}
	good, bad := &list.Items[0], &list.Items[1]
	if err := validateSpec(good, DefaultedBenchmarks(good)); err != nil {
		t.Errorf("validateSpec(good) = %v, want nil", err)
	}
	const want = `spec.timeout: "1d" is not a duration: write it as 24h`
	if err := validateSpec(bad, DefaultedBenchmarks(bad)); err == nil || err.Error() != want {
		t.Errorf("validateSpec(typo) = %v, want %q", err, want)
	}
}

// validateSpec refuses every value the CRD refuses that a suite stored earlier may still hold.
func TestValidateSpecRefusesStoredValuesTheCRDRefuses(t *testing.T) {
	tests := []struct {
		name string
		edit func(*vmbenchv1.BenchmarkSuite)
		want string
	}{
		{"benchmark timeout", func(s *vmbenchv1.BenchmarkSuite) { s.Spec.Benchmarks[0].Timeout = ptr.To[vmbenchv1.Duration]("-1h") },
			`spec.benchmarks[0].timeout: "-1h" is not a duration`},
		{"huge benchmark timeout", func(s *vmbenchv1.BenchmarkSuite) {
			s.Spec.Benchmarks[0].Timeout = ptr.To[vmbenchv1.Duration]("2000000h")
		},
			`spec.benchmarks[0].timeout: "2000000h" is not a duration`},
		{"platform name", func(s *vmbenchv1.BenchmarkSuite) { s.Spec.Platforms[1].Name = "vm-container" },
			`spec.platforms[1].name: "vm-container" is not lowercase letters and digits`},
		{"suite name", func(s *vmbenchv1.BenchmarkSuite) { s.Name = "1abc" },
			`metadata.name: "1abc" is not a DNS-1035 label`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			suite := testSuite()
			tt.edit(suite)
			err := validateSpec(suite, DefaultedBenchmarks(suite))
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("validateSpec() = %v, want an error starting with %q", err, tt.want)
			}
		})
	}
}
