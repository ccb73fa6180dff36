package suite

import (
	"errors"
	"strings"
	"testing"

	mpiv2 "github.com/kubeflow/mpi-operator/pkg/apis/kubeflow/v2beta1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kubevirtv1 "kubevirt.io/api/core/v1"
)

var (
	mpiJobKind = mpiv2.SchemeGroupVersion.WithKind("MPIJob")
	vmiKind    = kubevirtv1.SchemeGroupVersion.WithKind("VirtualMachineInstance")
)

// failingMapper answers every mapping with err, as a mapper does when the API server cannot be reached.
type failingMapper struct {
	meta.RESTMapper
	err error
}

func (m failingMapper) RESTMapping(schema.GroupKind, ...string) (*meta.RESTMapping, error) {
	return nil, m.err
}

func TestAvailableKinds(t *testing.T) {
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(mpiJobKind, meta.RESTScopeNamespace)
	got, err := AvailableKinds(mapper)
	if err != nil {
		t.Fatal(err)
	}
	if !got[mpiJobKind] || got[vmiKind] {
		t.Errorf("a mapper that knows MPIJob alone: %v", got)
	}

	if got, err := AvailableKinds(failingMapper{err: errors.New("connection refused")}); err == nil || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("a mapper that cannot reach the API server: %v, %v, want the error, not an unavailable platform", got, err)
	}
}

func TestUnavailablePlatforms(t *testing.T) {
	for _, tc := range []struct {
		name      string
		available map[schema.GroupVersionKind]bool
		want      []string
	}{
		{"both served", map[schema.GroupVersionKind]bool{mpiJobKind: true, vmiKind: true}, nil},
		{"no MPI Operator", map[schema.GroupVersionKind]bool{vmiKind: true}, []string{
			"platforms of type Container and Host are unavailable: the MPIJob API (kubeflow.org/v2beta1) is not served; install the MPI Operator (its v2beta1 API) and restart vmbench",
		}},
		{"neither", map[schema.GroupVersionKind]bool{mpiJobKind: false}, []string{
			"platforms of type Container and Host are unavailable: the MPIJob API (kubeflow.org/v2beta1) is not served; install the MPI Operator (its v2beta1 API) and restart vmbench",
			"platforms of type VM are unavailable: the VirtualMachineInstance API (kubevirt.io/v1) is not served; install KubeVirt and restart vmbench",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := UnavailablePlatforms(tc.available)
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}
