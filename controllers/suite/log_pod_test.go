package suite

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

func TestPickLogPod(t *testing.T) {
	launcherJob := controllerRef{GVK: schema.GroupVersionKind{Group: "batch", Version: "v1", Kind: "Job"}, Name: "q-container-1-launcher",
		UID: "job-uid", Of: "MPIJob q-container-1 (uid mpijob-uid)"}
	start := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	pod := func(name string, created time.Duration, ref *metav1.OwnerReference) corev1.Pod {
		p := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(start.Add(created))}}
		if ref != nil {
			p.OwnerReferences = []metav1.OwnerReference{*ref}
		}
		return p
	}
	ref := func(apiVersion, kind, name string, uid types.UID, controller bool) *metav1.OwnerReference {
		return &metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: name, UID: uid, Controller: ptr.To(controller)}
	}
	launcher := ref("batch/v1", "Job", "q-container-1-launcher", "job-uid", true)
	tests := []struct {
		name       string
		pods       []corev1.Pod
		want       string
		lookalikes []string
		refusedIn  []string
	}{
		{name: "the launcher Job's pod", pods: []corev1.Pod{pod("q-container-1-launcher-abcde", 0, launcher)}, want: "q-container-1-launcher-abcde"},
		{name: "a newer look-alike with the same labels and no controller is not read",
			pods: []corev1.Pod{pod("q-container-1-launcher-abcde", 0, launcher), pod("q-container-1-launcher-fake", time.Minute, nil)},
			want: "q-container-1-launcher-abcde", lookalikes: []string{"q-container-1-launcher-fake"}},
		{name: "a look-alike controlled by a Job of the same name but another UID is not read",
			pods: []corev1.Pod{pod("fake", time.Minute, ref("batch/v1", "Job", "q-container-1-launcher", "other-uid", true)),
				pod("q-container-1-launcher-abcde", 0, launcher)},
			want: "q-container-1-launcher-abcde", lookalikes: []string{"fake"}},
		{name: "an owner that is not the controller does not count",
			pods:       []corev1.Pod{pod("fake", time.Minute, ref("batch/v1", "Job", "q-container-1-launcher", "job-uid", false))},
			lookalikes: []string{"fake"}, refusedIn: []string{"pod fake (its controller: none) has the run's labels but is not controlled by " +
				"Job q-container-1-launcher (uid job-uid) of MPIJob q-container-1 (uid mpijob-uid); its log is not read"}},
		{name: "the right UID under another kind does not count",
			pods:       []corev1.Pod{pod("fake", time.Minute, ref("apps/v1", "ReplicaSet", "q-container-1-launcher", "job-uid", true))},
			lookalikes: []string{"fake"}, refusedIn: []string{"its controller: ReplicaSet q-container-1-launcher (uid job-uid)"}},
		{name: "of two pods of the launcher Job, the older: a forged controller reference comes after the launcher's pod",
			pods: []corev1.Pod{pod("forged", time.Minute, launcher), pod("q-container-1-launcher-abcde", 0, launcher)},
			want: "q-container-1-launcher-abcde,forged"},
		{name: "only look-alikes: every one is named",
			pods:       []corev1.Pod{pod("b", 0, nil), pod("a", 0, ref("v1", "Pod", "x", "x-uid", true))},
			lookalikes: []string{"b", "a"}, refusedIn: []string{"pods a (its controller: Pod x (uid x-uid)), b (its controller: none) have the run's labels", "their logs are not read"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			own, lookalikes, refused := pickLogPods(tt.pods, launcherJob)
			var names []string
			for _, p := range own {
				names = append(names, p.Name)
			}
			got := strings.Join(names, ",")
			if strings.Join(lookalikes, ",") != strings.Join(tt.lookalikes, ",") {
				t.Errorf("look-alikes %v, want %v", lookalikes, tt.lookalikes)
			}
			if tt.want == "" {
				if got != "" || refused == nil {
					t.Fatalf("pickLogPods() = %v, %v; want no pod and a reason", got, refused)
				}
				for _, w := range tt.refusedIn {
					if !strings.Contains(refused.Error(), w) {
						t.Errorf("reason %q does not contain %q", refused, w)
					}
				}
				return
			}
			if refused != nil || got != tt.want {
				t.Fatalf("pickLogPods() = %v, %v; want pods %s", got, refused, tt.want)
			}
		})
	}
}
