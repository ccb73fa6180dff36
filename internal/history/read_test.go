package history

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func TestParseLines(t *testing.T) {
	recs, err := ParseLines("{\"suite\":\"a\"}\n\n  \n{\"suite\":\"b\"}")
	if err != nil || len(recs) != 2 || recs[0].Suite != "a" || recs[1].Suite != "b" {
		t.Fatalf("records %+v, error %v", recs, err)
	}
	if _, err := ParseLines("{\"suite\":\"a\"}\n[1]\n"); err == nil || !strings.Contains(err.Error(), "line 2 is not a history record") {
		t.Errorf("error %v, want line 2 named", err)
	}
}

func TestFromConfigMaps(t *testing.T) {
	yes, no := true, false
	cm := func(name string, uid types.UID, controller *bool, suite string) corev1.ConfigMap {
		return corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "bench",
				OwnerReferences: []metav1.OwnerReference{{Kind: "BenchmarkSchedule", Name: "nightly", UID: uid, Controller: controller}}},
			Data: map[string]string{DataKey: "{\"suite\":\"" + suite + "\"}\n"},
		}
	}
	recs, err := FromConfigMaps("nightly", "u", []corev1.ConfigMap{
		cm("nightly-history-10", "u", &yes, "third"),
		cm("nightly-history-x", "u", &yes, "not an index"),
		cm("nightly-history-1", "u", &no, "owned, not controlled"),
		cm("other-history-0", "u", &yes, "another name"),
		cm("nightly-history-0", "u", &yes, "first"),
		cm("nightly-history-4", "v", &yes, "another schedule's"),
		cm("nightly-history-2", "u", &yes, "second"),
	})
	var got []string
	for _, r := range recs {
		got = append(got, r.Suite)
	}
	if err != nil || strings.Join(got, ",") != "first,second,third" {
		t.Errorf("suites %v, error %v; want first,second,third", got, err)
	}
	bad := cm("nightly-history-0", "u", &yes, "x")
	bad.Data[DataKey] = "nope\n"
	if _, err := FromConfigMaps("nightly", "u", []corev1.ConfigMap{bad}); err == nil ||
		!strings.Contains(err.Error(), "ConfigMap bench/nightly-history-0") || !strings.Contains(err.Error(), "delete the line or the ConfigMap") {
		t.Errorf("error %v, want the ConfigMap and what to do", err)
	}
}
