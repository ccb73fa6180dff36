package archive

import (
	"encoding/json"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
)

// archiveDocument is obj as the archive keeps it: JSON, as `kubectl get -o json` prints it, with
// its kind and without managedFields, which say who wrote which field and can be as large as the
// object. obj is not changed.
func archiveDocument(obj runtime.Object, gvk schema.GroupVersionKind) ([]byte, error) {
	obj = obj.DeepCopyObject()
	accessor, err := meta.Accessor(obj)
	if err != nil {
		return nil, err
	}
	accessor.SetManagedFields(nil)
	obj.GetObjectKind().SetGroupVersionKind(gvk)
	body, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("encoding %s %s for the archive: %w", gvk.Kind, accessor.GetName(), err)
	}
	return body, nil
}

// ownedNames are the names of the objects that the suite controls, by UID, sorted: labels are
// anyone's to set, so a ConfigMap that merely carries the suite's labels is not its.
func ownedNames(items []metav1.PartialObjectMetadata, suite *vmbenchv1.BenchmarkSuite) []string {
	var names []string
	for i := range items {
		if metav1.IsControlledBy(&items[i], suite) {
			names = append(names, items[i].Name)
		}
	}
	slices.Sort(names)
	return names
}
