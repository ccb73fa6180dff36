package scheme

import (
	mpiv2 "github.com/kubeflow/mpi-operator/pkg/apis/kubeflow/v2beta1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	kubevirtv1 "kubevirt.io/api/core/v1"
	migrationsv1alpha1 "kubevirt.io/api/migrations/v1alpha1"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
)

// NewScheme knows every type the controller reads or writes.
func New() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(vmbenchv1.AddToScheme(s))
	utilruntime.Must(mpiv2.AddToScheme(s))
	utilruntime.Must(kubevirtv1.AddToScheme(s))
	utilruntime.Must(migrationsv1alpha1.AddToScheme(s))
	return s
}
