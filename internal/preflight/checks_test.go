package preflight

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/internal/platform"
)

func TestCheckAPIs(t *testing.T) {
	all := ServedAPIs{"benchmarksuites.vmbench.io": {"v1alpha1"}, "mpijobs.kubeflow.org": {"v1", "v2beta1"}, "virtualmachineinstances.kubevirt.io": {"v1"}}
	containerOnly := func(t *testing.T) *vmbenchv1.BenchmarkSuite {
		return shaped(t, 1, "", "1Gi", vmbenchv1.PlatformContainer)
	}
	tests := []struct {
		name     string
		suite    func(t *testing.T) *vmbenchv1.BenchmarkSuite
		explicit bool
		served   ServedAPIs
		want     map[string]Result
		detail   map[string]string
	}{
		{name: "everything served", suite: quick, explicit: true, served: all,
			want:   map[string]Result{"api/benchmarksuites": Pass, "api/mpijobs": Pass, "api/virtualmachineinstances": Pass},
			detail: map[string]string{"api/mpijobs": "kubeflow.org/v2beta1 mpijobs served (versions v1, v2beta1)"}},
		{name: "no KubeVirt for a suite with VMs", suite: quick, explicit: true,
			served: ServedAPIs{"benchmarksuites.vmbench.io": {"v1alpha1"}, "mpijobs.kubeflow.org": {"v2beta1"}},
			want:   map[string]Result{"api/virtualmachineinstances": Fail},
			detail: map[string]string{"api/virtualmachineinstances": "kubevirt.io/v1 virtualmachineinstances is not served: VM platforms (KubeVirt) cannot run"}},
		{name: "no KubeVirt for the default suite", suite: quick, explicit: false,
			served: ServedAPIs{"benchmarksuites.vmbench.io": {"v1alpha1"}, "mpijobs.kubeflow.org": {"v2beta1"}},
			want:   map[string]Result{"api/virtualmachineinstances": Warn}},
		{name: "no KubeVirt for a container suite", suite: containerOnly, explicit: true,
			served: ServedAPIs{"benchmarksuites.vmbench.io": {"v1alpha1"}, "mpijobs.kubeflow.org": {"v2beta1"}},
			want:   map[string]Result{"api/virtualmachineinstances": Warn, "api/mpijobs": Pass}},
		{name: "an old MPI Operator", suite: quick, explicit: true,
			served: ServedAPIs{"benchmarksuites.vmbench.io": {"v1alpha1"}, "mpijobs.kubeflow.org": {"v1"}, "virtualmachineinstances.kubevirt.io": {"v1"}},
			want:   map[string]Result{"api/mpijobs": Fail},
			detail: map[string]string{"api/mpijobs": "mpijobs.kubeflow.org is served only in v1, vmbench speaks v2beta1"}},
		{name: "no CRDs", suite: quick, explicit: false, served: ServedAPIs{},
			want: map[string]Result{"api/benchmarksuites": Fail}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checks := CheckAPIs(needsOf(t, tt.suite(t), tt.explicit), tt.served)
			for name, result := range tt.want {
				expect(t, byName(checks, name), result, tt.detail[name])
			}
		})
	}
}

func namespace(labels map[string]string) *corev1.Namespace {
	ns := &corev1.Namespace{}
	ns.Name = "bench"
	ns.Labels = labels
	return ns
}

func TestCheckNamespace(t *testing.T) {
	needs := needsOf(t, quick(t), true)
	expect(t, CheckNamespace(needs, namespace(nil), nil), Pass, `namespace "bench" exists`)
	expect(t, CheckNamespace(needs, nil, apierrors.NewNotFound(schema.GroupResource{Resource: "namespaces"}, "bench")), Fail, `namespace "bench" not found`)
	expect(t, CheckNamespace(needs, nil, errForbidden), Warn, `cannot read namespace "bench"`)
	gone := namespace(nil)
	gone.Status.Phase = corev1.NamespaceTerminating
	expect(t, CheckNamespace(needs, gone, nil), Fail, "being deleted")
}

func TestCheckPodSecurity(t *testing.T) {
	enforce := func(level string) *corev1.Namespace {
		return namespace(map[string]string{"pod-security.kubernetes.io/enforce": level})
	}
	host := func(t *testing.T) *vmbenchv1.BenchmarkSuite { return shaped(t, 1, "", "1Gi", vmbenchv1.PlatformHost) }
	vmOnly := func(t *testing.T) *vmbenchv1.BenchmarkSuite { return shaped(t, 1, "", "1Gi", vmbenchv1.PlatformVM) }
	tests := []struct {
		name     string
		suite    func(t *testing.T) *vmbenchv1.BenchmarkSuite
		explicit bool
		ns       *corev1.Namespace
		launcher platform.VirtLauncher
		result   Result
		detail   string
	}{
		{name: "no label", suite: quick, explicit: true, ns: namespace(nil), result: Pass, detail: "the cluster's default level applies"},
		{name: "privileged admits everything", suite: host, explicit: true, ns: enforce("privileged"), result: Pass,
			detail: "pod-security.kubernetes.io/enforce=privileged admits the pods vmbench builds"},
		{name: "baseline refuses Host pods", suite: host, explicit: true, ns: enforce("baseline"), result: Fail,
			detail: "pod-security.kubernetes.io/enforce=baseline refuses the runner's pods: platform host (Host pods): "},
		{name: "baseline's reason for Host pods", suite: host, explicit: true, ns: enforce("baseline"), result: Fail, detail: "host namespaces (hostNetwork=true)"},
		{name: "restricted refuses Host pods, a warning for the default suite", suite: host, ns: enforce("restricted"), result: Warn,
			detail: "host namespaces"},
		{name: "restricted refuses virt-launcher", suite: vmOnly, explicit: true, ns: enforce("restricted"), result: Fail,
			detail: "platform vm (KubeVirt's virt-launcher pods): seccompProfile"},
		{name: "restricted admits virt-launcher with KubeVirt's seccomp profile", suite: vmOnly, explicit: true, ns: enforce("restricted"),
			launcher: platform.VirtLauncher{Seccomp: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}}, result: Pass,
			detail: "admits the pods vmbench builds and KubeVirt's virt-launcher pods"},
		{name: "baseline and VMs", suite: vmOnly, explicit: true, ns: enforce("baseline"), result: Pass},
		{name: "baseline refuses a root virt-launcher", suite: vmOnly, explicit: true, ns: enforce("baseline"),
			launcher: platform.VirtLauncher{Root: true}, result: Fail, detail: "SYS_NICE"},
		{name: "a label that does not parse", suite: quick, explicit: true, ns: enforce("strict"), result: Fail, detail: "do not parse"},
		{name: "namespace unreadable", suite: quick, explicit: true, result: Skip},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			expect(t, CheckPodSecurity(needsOf(t, tt.suite(t), tt.explicit), tt.ns, tt.launcher), tt.result, tt.detail)
		})
	}
}

func quota(name string, hard, used corev1.ResourceList) corev1.ResourceQuota {
	q := corev1.ResourceQuota{}
	q.Name = name
	q.Spec.Hard = hard
	q.Status.Hard = hard
	q.Status.Used = used
	return q
}

func rl(pairs ...string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for i := 0; i < len(pairs); i += 2 {
		out[corev1.ResourceName(pairs[i])] = resource.MustParse(pairs[i+1])
	}
	return out
}

func TestCheckQuotas(t *testing.T) {
	container := shaped(t, 1, "100m", "1Gi", vmbenchv1.PlatformContainer)
	terminating := quota("short", rl("pods", "1"), nil)
	terminating.Spec.Scopes = []corev1.ResourceQuotaScope{corev1.ResourceQuotaScopeTerminating}
	tests := []struct {
		name   string
		suite  *vmbenchv1.BenchmarkSuite
		quotas []corev1.ResourceQuota
		lrs    []corev1.LimitRange
		result Result
		detail []string
	}{
		{name: "room", suite: container, quotas: []corev1.ResourceQuota{quota("q", rl("pods", "10", "requests.cpu", "4", "count/mpijobs.kubeflow.org", "2"), rl("pods", "1"))},
			result: Pass, detail: []string{"room for one run: count/mpijobs.kubeflow.org 1 of 2 free, pods 3 of 9 free, requests.cpu 300m of 4 free"}},
		{name: "pods above the hard limit", suite: container, quotas: []corev1.ResourceQuota{quota("q", rl("pods", "2"), nil)},
			result: Fail, detail: []string{"above the hard limit: pods: platform container needs 3, hard 2, used 0"}},
		{name: "memory taken by others", suite: container, quotas: []corev1.ResourceQuota{quota("q", rl("requests.memory", "4Gi"), rl("requests.memory", "2Gi"))},
			result: Warn, detail: []string{"more than is left now: requests.memory: platform container needs 3Gi, hard 4Gi, used 2Gi"}},
		{name: "MPIJobs counted", suite: container, quotas: []corev1.ResourceQuota{quota("q", rl("count/mpijobs.kubeflow.org", "0"), nil)},
			result: Fail, detail: []string{"count/mpijobs.kubeflow.org: platform container needs 1, hard 0"}},
		{name: "VMs set no memory limit", suite: quick(t), quotas: []corev1.ResourceQuota{quota("q", rl("limits.memory", "100Gi"), nil)},
			result: Fail, detail: []string{"the quota needs limits the pods do not set: limits.memory (platform vm sets no memory limit on its pods)"}},
		{name: "a LimitRange default fills the VMs' memory limit", suite: quick(t), quotas: []corev1.ResourceQuota{quota("q", rl("limits.memory", "100Gi"), nil)},
			lrs:    []corev1.LimitRange{{Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{Type: corev1.LimitTypeContainer, Default: rl("memory", "4Gi")}}}}},
			result: Pass, detail: []string{"limits.memory 3Gi of 100Gi free"}},
		{name: "scoped to terminating pods", suite: container, quotas: []corev1.ResourceQuota{terminating}, result: Skip},
		{name: "nothing the suite uses", suite: container, quotas: []corev1.ResourceQuota{quota("q", rl("count/deployments.apps", "1"), nil)}, result: Pass,
			detail: []string{"limits nothing the suite uses"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checks := CheckQuotas(needsOf(t, tt.suite, true), tt.quotas, nil, tt.lrs)
			if len(checks) != 1 {
				t.Fatalf("%d checks: %+v", len(checks), checks)
			}
			expect(t, checks[0], tt.result, tt.detail...)
		})
	}
	expect(t, CheckQuotas(needsOf(t, container, true), nil, nil, nil)[0], Pass, `no ResourceQuota in namespace "bench"`)
	expect(t, CheckQuotas(needsOf(t, container, true), nil, errForbidden, nil)[0], Warn, "cannot read the namespace's ResourceQuotas")
}

func TestCheckLimitRanges(t *testing.T) {
	lr := func(items ...corev1.LimitRangeItem) []corev1.LimitRange {
		return []corev1.LimitRange{{ObjectMeta: metav1.ObjectMeta{Name: "limits"}, Spec: corev1.LimitRangeSpec{Limits: items}}}
	}
	container := shaped(t, 1, "100m", "1Gi", vmbenchv1.PlatformContainer)
	vm := shaped(t, 1, "", "2Gi", vmbenchv1.PlatformVM)
	shared := shaped(t, 1, "", "1Gi", vmbenchv1.PlatformContainer)
	shared.Spec.SharedStorage = &vmbenchv1.SharedStorage{StorageClassName: "nfs", Size: ptr.To(resource.MustParse("4Gi"))}
	shared.Spec.Benchmarks = append(shared.Spec.Benchmarks, vmbenchv1.Benchmark{Name: "fio-shared", Type: vmbenchv1.BenchmarkFio, Fio: &vmbenchv1.FioParams{Target: vmbenchv1.StorageShared}})
	tests := []struct {
		name   string
		suite  *vmbenchv1.BenchmarkSuite
		lrs    []corev1.LimitRange
		result Result
		detail string
	}{
		{name: "within", suite: container, lrs: lr(corev1.LimitRangeItem{Type: corev1.LimitTypeContainer, Max: rl("cpu", "4", "memory", "8Gi")}), result: Pass},
		{name: "container limit above the max", suite: container, lrs: lr(corev1.LimitRangeItem{Type: corev1.LimitTypeContainer, Max: rl("cpu", "500m")}),
			result: Fail, detail: "platform container, container launcher: cpu 1 above the max 500m"},
		{name: "pod request below the min", suite: container, lrs: lr(corev1.LimitRangeItem{Type: corev1.LimitTypePod, Min: rl("cpu", "200m")}),
			result: Fail, detail: "platform container, pod: cpu request 100m below the min 200m"},
		{name: "limit/request ratio", suite: container, lrs: lr(corev1.LimitRangeItem{Type: corev1.LimitTypeContainer, MaxLimitRequestRatio: rl("cpu", "4")}),
			result: Fail, detail: "cpu limit/request 1/100m above the max ratio 4"},
		{name: "a default limit below the VMs' memory request", suite: vm, lrs: lr(corev1.LimitRangeItem{Type: corev1.LimitTypeContainer, Default: rl("memory", "1Gi")}),
			result: Fail, detail: "platform vm, container compute: memory request 2.2Gi above its limit 1Gi (the LimitRange's default limit)"},
		{name: "the shared claim above the max", suite: shared, lrs: lr(corev1.LimitRangeItem{Type: corev1.LimitTypePersistentVolumeClaim, Max: rl("storage", "1Gi")}),
			result: Fail, detail: "shared claim: storage 4Gi above the max 1Gi"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checks := CheckLimitRanges(needsOf(t, tt.suite, true), tt.lrs, nil)
			if len(checks) != 1 {
				t.Fatalf("%d checks: %+v", len(checks), checks)
			}
			expect(t, checks[0], tt.result, tt.detail)
		})
	}
	expect(t, CheckLimitRanges(needsOf(t, container, true), nil, nil)[0], Pass, "no LimitRange")
}

func TestCheckSharedStorage(t *testing.T) {
	suite := func(platforms ...vmbenchv1.PlatformType) *vmbenchv1.BenchmarkSuite {
		s := shaped(t, 1, "", "1Gi", platforms...)
		s.Spec.SharedStorage = &vmbenchv1.SharedStorage{StorageClassName: "files"}
		s.Spec.Benchmarks = append(s.Spec.Benchmarks, vmbenchv1.Benchmark{Name: "io-shared", Type: vmbenchv1.BenchmarkIozone,
			Iozone: &vmbenchv1.IozoneParams{Targets: []vmbenchv1.StorageTarget{vmbenchv1.StorageLocal, vmbenchv1.StorageShared}}})
		return s
	}
	class := func(name, provisioner string) storagev1.StorageClass {
		return storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Provisioner: provisioner}
	}
	container := needsOf(t, suite(vmbenchv1.PlatformContainer), true)
	expect(t, CheckSharedStorage(container, []storagev1.StorageClass{class("files", "openshift-storage.cephfs.csi.ceph.com")}, nil), Pass,
		`storage class "files" (openshift-storage.cephfs.csi.ceph.com) offers ReadWriteMany`)
	expect(t, CheckSharedStorage(container, []storagev1.StorageClass{class("files", "rancher.io/local-path")}, nil), Warn,
		"whether it offers ReadWriteMany cannot be read from the API")
	expect(t, CheckSharedStorage(container, []storagev1.StorageClass{class("standard", "rancher.io/local-path")}, nil), Fail,
		`storage class "files" of spec.sharedStorage not found; there are: standard`)
	expect(t, CheckSharedStorage(container, nil, errForbidden), Warn, "cannot read storage classes")
	expect(t, CheckSharedStorage(needsOf(t, suite(vmbenchv1.PlatformContainer, vmbenchv1.PlatformVM), true),
		[]storagev1.StorageClass{class("files", "nfs.csi.k8s.io")}, nil), Pass, `storage class "files" (nfs.csi.k8s.io) offers ReadWriteMany`)
	expect(t, CheckSharedStorage(container, []storagev1.StorageClass{class("files", "vmbench.io/shared-host-path")}, nil), Pass,
		`storage class "files" (vmbench.io/shared-host-path) offers ReadWriteMany`)
	// VMs need no class: not even a missing one fails.
	expect(t, CheckSharedStorage(needsOf(t, suite(vmbenchv1.PlatformVM), true), nil, nil), Skip,
		"no Container or Host platform uses the Shared storage target (VMs share their master's disk over NFS)")
	expect(t, CheckSharedStorage(needsOf(t, quick(t), true), nil, nil), Skip, "no Container or Host platform uses the Shared storage target")
}

func deployment(name string, labels map[string]string, available int32, args ...string) appsv1.Deployment {
	d := appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "vmbench-system", Labels: labels}}
	d.Spec.Replicas = ptr.To[int32](1)
	d.Spec.Template.Spec.Containers = []corev1.Container{{Name: "manager", Args: args}}
	d.Status.AvailableReplicas = available
	return d
}

func TestManagerFrom(t *testing.T) {
	chart := deployment("vmbench-manager", nil, 1, "--leader-elect", "--runner-image=reg.example/runner:v1", "--vm-disk-image", "reg.example/disk:v1",
		"--image-pull-policy=Always", "-emulation=forbid")
	m := ManagerFrom([]appsv1.Deployment{deployment("other", nil, 1, "--port=1"), chart})
	want := Manager{Namespace: "vmbench-system", Name: "vmbench-manager", RunnerImage: "reg.example/runner:v1", VMDisk: "reg.example/disk:v1",
		PullPolicy: corev1.PullAlways, Emulation: "forbid", Available: 1, Replicas: 1}
	if m == nil || *m != want {
		t.Fatalf("got %+v\nwant %+v", m, want)
	}
	labelled := ManagerFrom([]appsv1.Deployment{deployment("mgr", map[string]string{"app.kubernetes.io/name": "vmbench", "app.kubernetes.io/component": "manager"}, 0)})
	if labelled == nil || labelled.RunnerImage != "vmbench/runner:dev" || labelled.PullPolicy != corev1.PullIfNotPresent || labelled.Emulation != "allow" {
		t.Errorf("flags left out must take the manager's defaults: %+v", labelled)
	}
	if ManagerFrom([]appsv1.Deployment{deployment("other", nil, 1)}) != nil {
		t.Error("a Deployment that is not vmbench's was taken for the manager")
	}

	expect(t, CheckManager(m, "vmbench-system", nil), Pass, "vmbench-system/vmbench-manager available (1 of 1); runner reg.example/runner:v1, VM disk reg.example/disk:v1, pull policy Always")
	expect(t, CheckManager(labelled, "vmbench-system", nil), Fail, "has no available replica")
	expect(t, CheckManager(nil, "vmbench-system", nil), Fail, `no vmbench manager Deployment in namespace "vmbench-system"`)
	expect(t, CheckManager(nil, "vmbench-system", errForbidden), Warn, "cannot read Deployments")
}

func TestPullState(t *testing.T) {
	img := Image{Role: "runner", Ref: "reg.example/runner:v1", PullPolicy: corev1.PullIfNotPresent}
	pod := func(phase corev1.PodPhase, state corev1.ContainerState) *corev1.Pod {
		p := &corev1.Pod{}
		p.Spec.NodeName = "w1"
		p.Status.Phase = phase
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "pull", State: state}}
		return p
	}
	waiting := func(reason, message string) corev1.ContainerState {
		return corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: message}}
	}
	tests := []struct {
		name   string
		pod    *corev1.Pod
		done   bool
		result Result
		detail string
	}{
		{name: "pending", pod: &corev1.Pod{}, done: false},
		{name: "creating", pod: pod(corev1.PodPending, waiting("ContainerCreating", "")), done: false},
		{name: "ran", pod: pod(corev1.PodSucceeded, corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0}}), done: true, result: Pass,
			detail: "reg.example/runner:v1 pulled on node w1 (pull policy IfNotPresent)"},
		{name: "a disk image cannot run true", pod: pod(corev1.PodPending, waiting("RunContainerError", "exec: \"true\": executable file not found")), done: true, result: Pass,
			detail: "the check's container then stopped with RunContainerError"},
		{name: "pull refused", pod: pod(corev1.PodPending, waiting("ErrImagePull", "failed to pull: 401 Unauthorized")), done: true, result: Fail,
			detail: "reg.example/runner:v1 cannot be pulled on node w1: ErrImagePull: failed to pull: 401 Unauthorized"},
		{name: "back-off", pod: pod(corev1.PodPending, waiting("ImagePullBackOff", "Back-off pulling image")), done: true, result: Fail, detail: "ImagePullBackOff"},
		{name: "never pull", pod: pod(corev1.PodPending, waiting("ErrImageNeverPull", "not present")), done: true, result: Fail, detail: "ErrImageNeverPull"},
		{name: "deadline", pod: &corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodFailed, Reason: "DeadlineExceeded", Message: "too long"}}, done: true, result: Warn,
			detail: "ended before its image was seen (DeadlineExceeded: too long)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			done, c := PullState(img, tt.pod)
			if done != tt.done {
				t.Fatalf("done %v, want %v (%+v)", done, tt.done, c)
			}
			if done {
				expect(t, c, tt.result, tt.detail)
			}
		})
	}
	unscheduled := &corev1.Pod{Status: corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse,
		Reason: "Unschedulable", Message: "0/3 nodes are available"}}}}
	expect(t, PullTimedOut(img, unscheduled, 2*60e9), Warn, "was not scheduled within 2m0s: Unschedulable: 0/3 nodes are available")
	expect(t, PullTimedOut(img, pod(corev1.PodPending, waiting("ContainerCreating", "")), 2*60e9), Warn, "still being pulled after 2m0s on node w1")
}

func TestImagePodIsRestricted(t *testing.T) {
	s := quick(t)
	s.Spec.Placement.NodeSelector = map[string]vmbenchv1.LabelValue{"pool": "bench"}
	needs := needsOf(t, s, true)
	pod := ImagePod(needs, Image{Role: "vm-disk", Ref: "reg.example/disk:v1", PullPolicy: corev1.PullAlways}, 2*60e9)
	if pod.Namespace != "bench" || pod.Spec.NodeSelector["pool"] != "bench" || pod.Spec.Containers[0].ImagePullPolicy != corev1.PullAlways {
		t.Errorf("pod does not follow the suite: %+v", pod)
	}
	if *pod.Spec.ActiveDeadlineSeconds != 150 {
		t.Errorf("activeDeadlineSeconds %d, want the timeout plus 30 s", *pod.Spec.ActiveDeadlineSeconds)
	}
	restricted := needs
	restricted.Platforms = []PlatformNeeds{{Platform: vmbenchv1.Platform{Name: "check", Type: vmbenchv1.PlatformContainer},
		Pods: []corev1.PodTemplateSpec{{ObjectMeta: pod.ObjectMeta, Spec: pod.Spec}}}}
	expect(t, CheckPodSecurity(restricted, namespace(map[string]string{"pod-security.kubernetes.io/enforce": "restricted"}), platform.VirtLauncher{}), Pass, "admits")
}

func TestImagesOf(t *testing.T) {
	got := ImagesOf(needsOf(t, quick(t), true))
	if len(got) != 2 || got[0].Ref != testImages.Runner || got[1].Ref != testImages.VMDisk {
		t.Errorf("quick sample: %+v", got)
	}
	if got := ImagesOf(needsOf(t, shaped(t, 1, "", "1Gi", vmbenchv1.PlatformVM), true)); len(got) != 1 || got[0].Role != "vm-disk" {
		t.Errorf("VM only: %+v", got)
	}
}

func TestKubeVirtConfigOf(t *testing.T) {
	kv := unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"configuration": map[string]any{
		"developerConfiguration": map[string]any{"useEmulation": true}}}}}
	if diff := cmp.Diff(KubeVirtConfig{Found: true, Emulation: true, Features: platform.KubeVirtFeatures{Found: true}},
		KubeVirtConfigOf([]unstructured.Unstructured{kv})); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(KubeVirtConfig{}, KubeVirtConfigOf(nil)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestNeedsFromTheChildren(t *testing.T) {
	needs := needsOf(t, quick(t), true)
	if len(needs.Platforms) != 2 {
		t.Fatalf("platforms: %+v", needs.Platforms)
	}
	container, vm := needs.Platforms[0], needs.Platforms[1]
	if len(container.Members) != 3 || len(container.Pods) != 2 || container.Objects["count/mpijobs.kubeflow.org"] != 1 || container.Objects["pods"] != 3 {
		t.Errorf("container: %d members, %d templates, objects %v", len(container.Members), len(container.Pods), container.Objects)
	}
	req := container.Members[0].Requests()
	if cpu, mem := req[corev1.ResourceCPU], req[corev1.ResourceMemory]; cpu.String() != "100m" || mem.String() != "1Gi" {
		t.Errorf("container member requests %v", req)
	}
	if len(vm.Members) != 3 || len(vm.Pods) != 0 || vm.Objects["count/virtualmachineinstances.kubevirt.io"] != 3 || !vm.Members[0].Estimated {
		t.Errorf("vm: %+v", vm)
	}
	if _, ok := vm.Members[0].Limits()[corev1.ResourceMemory]; ok {
		t.Error("a VM's pod has no memory limit of vmbench's making")
	}
	if got := VMMemoryOverhead(2, resource.MustParse("2Gi")); got.String() != "236Mi" {
		t.Errorf("overhead of 2 vCPUs and 2Gi: %s", got.String())
	}
	def := needsOf(t, DefaultSuite(), false)
	cpu, memory := largest(def.Platforms[0])
	if def.Explicit || len(def.Platforms) != 2 || cpu.String() != "2" || memory.String() != "2Gi" || def.Cluster.NodeCount() != 3 {
		t.Errorf("default suite: %+v, member %s %s", def, cpu.String(), memory.String())
	}
}

func TestReportOutput(t *testing.T) {
	r := Report{
		pass("api/mpijobs", "kubeflow.org/v2beta1 mpijobs served"),
		fail("fit/container", "no node has 64 CPUs allocatable: node a 2", "lower spec.cluster"),
		warn("kvm", "emulation\nsecond line", "use KVM"),
		skip("cpu-manager", "not visible"),
	}
	var table bytes.Buffer
	if err := r.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	want := `CHECK          RESULT  DETAIL
api/mpijobs    pass    kubeflow.org/v2beta1 mpijobs served
fit/container  fail    no node has 64 CPUs allocatable: node a 2 -> lower spec.cluster
kvm            warn    emulation second line -> use KVM
cpu-manager    skip    not visible
1 pass, 1 warn, 1 fail, 1 skip
`
	if table.String() != want {
		t.Errorf("table:\n%s\nwant:\n%s", table.String(), want)
	}
	var out bytes.Buffer
	if err := r.WriteJSON(&out, "quick", "bench"); err != nil {
		t.Fatal(err)
	}
	var decoded struct {
		Suite, Namespace string
		Failed           bool
		Checks           []Check
	}
	if err := json.Unmarshal(out.Bytes(), &decoded); err != nil || !decoded.Failed || len(decoded.Checks) != 4 || decoded.Suite != "quick" ||
		decoded.Checks[1].Action != "lower spec.cluster" || !strings.Contains(out.String(), `"result": "fail"`) {
		t.Errorf("json %v:\n%s", err, out.String())
	}
	if (Report{pass("a", ""), warn("b", "", ""), skip("c", "")}).Failed() {
		t.Error("warnings and skips failed the report")
	}
}
