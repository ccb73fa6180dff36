//go:build scale

package scale

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
)

// BenchmarkSuiteWriteCost measures what one create and one status write of a suite cost kube-apiserver
// in CPU (its user and system time, from /proc), which a loaded machine moves far less than it moves
// wall time: 200 suites created, then 200 status writes of the Queued condition, each a new message, as
// a waiting suite's reconcile writes it. Run it against the CRD as generated and against one without
// its rules to see what the rules cost (docs/performance.md).
func BenchmarkSuiteWriteCost(b *testing.B) {
	for range b.N {
		writeCost(b, 200)
	}
}

func writeCost(b *testing.B, n int) {
	ctx := context.Background()
	pid := apiserverPID(b)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "cost-"}}
	if err := direct.Create(ctx, ns); err != nil {
		b.Fatal(err)
	}
	before := procCPU(b, pid)
	for i := range n {
		s := &vmbenchv1.BenchmarkSuite{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("s%03d", i), Namespace: ns.Name},
			Spec:       vmbenchv1.BenchmarkSuiteSpec{Repetitions: 1, Benchmarks: benchmarks()},
		}
		if err := direct.Create(ctx, s); err != nil {
			b.Fatal(err)
		}
	}
	created := procCPU(b, pid)
	s := &vmbenchv1.BenchmarkSuite{}
	if err := direct.Get(ctx, client.ObjectKey{Namespace: ns.Name, Name: "s000"}, s); err != nil {
		b.Fatal(err)
	}
	for i := range n {
		orig := s.DeepCopy()
		meta.SetStatusCondition(&s.Status.Conditions, metav1.Condition{Type: vmbenchv1.ConditionQueued, Status: metav1.ConditionTrue,
			Reason: vmbenchv1.ReasonWaitingForRun, Message: fmt.Sprintf("%d in line for a run slot", i+1)})
		s.Status.Phase = vmbenchv1.SuitePending
		if err := direct.Status().Patch(ctx, s, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})); err != nil {
			b.Fatal(err)
		}
	}
	written := procCPU(b, pid)
	b.ReportMetric(float64((created-before).Microseconds())/1000/float64(n), "apiserver-cpu-ms/create")
	b.ReportMetric(float64((written-created).Microseconds())/1000/float64(n), "apiserver-cpu-ms/status-write")
}

// apiserverPID finds envtest's kube-apiserver: a child of this process.
func apiserverPID(b *testing.B) int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		b.Fatal(err)
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		s := string(stat)
		fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if strings.Contains(s, "(kube-apiserver)") && len(fields) > 1 && fields[1] == strconv.Itoa(os.Getpid()) {
			return pid
		}
	}
	b.Fatal("no kube-apiserver among this process's children")
	return 0
}
