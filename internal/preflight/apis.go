package preflight

import (
	"fmt"
	"slices"
	"strings"

	mpiv2 "github.com/kubeflow/mpi-operator/pkg/apis/kubeflow/v2beta1"
	kubevirtv1 "kubevirt.io/api/core/v1"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
)

// API is one resource that vmbench reads or writes, in the version it speaks.
type API struct {
	Group, Version, Resource, Kind string
	// For says who needs it.
	For string
}

// GroupVersion is the API's group/version, as apiVersion fields write it.
func (a API) GroupVersion() string { return a.Group + "/" + a.Version }

// The APIs vmbench speaks, also printed by `vmbench version`.
var (
	SuiteAPI = API{Group: vmbenchv1.GroupVersion.Group, Version: vmbenchv1.GroupVersion.Version,
		Resource: "benchmarksuites", Kind: "BenchmarkSuite", For: "every suite"}
	MPIJobAPI = API{Group: mpiv2.SchemeGroupVersion.Group, Version: mpiv2.SchemeGroupVersion.Version,
		Resource: "mpijobs", Kind: "MPIJob", For: "Container and Host platforms (Kubeflow MPI Operator)"}
	VMIAPI = API{Group: kubevirtv1.SchemeGroupVersion.Group, Version: kubevirtv1.SchemeGroupVersion.Version,
		Resource: "virtualmachineinstances", Kind: "VirtualMachineInstance", For: "VM platforms (KubeVirt)"}
)

// APIs lists SuiteAPI, MPIJobAPI and VMIAPI.
func APIs() []API { return []API{SuiteAPI, MPIJobAPI, VMIAPI} }

// ServedAPIs holds, per resource ("mpijobs.kubeflow.org"), the versions the API server serves it in.
// A group the server does not serve has no entry.
type ServedAPIs map[string][]string

func apiKey(a API) string { return a.Resource + "." + a.Group }

// CheckAPIs says whether each API vmbench needs is served in the version vmbench speaks. A missing
// MPIJob or VMI API fails when the suite given with -f has platforms that need it, and warns
// otherwise.
func CheckAPIs(needs Needs, served ServedAPIs) []Check {
	var out []Check
	for _, api := range APIs() {
		name := "api/" + api.Resource
		needed := true
		install := "install the vmbench CRDs (helm install vmbench charts/vmbench, or kubectl apply -f charts/vmbench/crds)"
		switch api {
		case MPIJobAPI:
			needed = needs.UsesMPIJob()
			install = "install the MPI Operator v0.6 or later (kubeflow.org/v2beta1), or remove the Container and Host platforms"
		case VMIAPI:
			needed = needs.UsesVMI()
			install = "install KubeVirt (kubevirt.io/v1), or remove the VM platforms"
		}
		versions := served[apiKey(api)]
		if slices.Contains(versions, api.Version) {
			detail := api.GroupVersion() + " " + api.Resource + " served"
			if len(versions) > 1 {
				detail += " (versions " + strings.Join(versions, ", ") + ")"
			}
			if !needed {
				detail += "; this suite does not use it"
			}
			out = append(out, pass(name, detail))
			continue
		}
		detail := fmt.Sprintf("%s is not served: %s cannot run", api.GroupVersion()+" "+api.Resource, api.For)
		if len(versions) > 0 {
			detail = fmt.Sprintf("%s is served only in %s, vmbench speaks %s: %s cannot run",
				api.Resource+"."+api.Group, strings.Join(versions, ", "), api.Version, api.For)
		}
		switch {
		case api == SuiteAPI:
			out = append(out, fail(name, detail, install))
		case needed && needs.Explicit:
			out = append(out, fail(name, detail, install))
		case needed:
			out = append(out, warn(name, detail, install))
		default:
			out = append(out, warn(name, detail+" (this suite does not use them)", install))
		}
	}
	return out
}
