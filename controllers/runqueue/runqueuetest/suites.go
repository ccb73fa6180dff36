// Package runqueuetest builds the suites and keys that the run queue's tests and the suite
// reconciler's queue tests share.
package runqueuetest

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
)

// Epoch is when the queue tests' suites are created, give or take their seconds.
var Epoch = time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)

// Namespace is the manager's namespace, where the queue's Leases are.
const Namespace = "vmbench-system"

// Queued builds a suite of namespace ns created at second sec after Epoch; opts set its status.
func Queued(ns, name string, sec int, opts ...func(*vmbenchv1.BenchmarkSuite)) vmbenchv1.BenchmarkSuite {
	s := vmbenchv1.BenchmarkSuite{ObjectMeta: metav1.ObjectMeta{
		Namespace: ns, Name: name, CreationTimestamp: metav1.NewTime(Epoch.Add(time.Duration(sec) * time.Second)),
		UID: types.UID("uid-" + ns + "-" + name),
	}}
	for _, o := range opts {
		o(&s)
	}
	return s
}

// Key is the key of suite name in namespace ns.
func Key(ns, name string) types.NamespacedName {
	return types.NamespacedName{Namespace: ns, Name: name}
}

// GetSuite reads a suite, failing the test if it cannot.
func GetSuite(t *testing.T, c client.Client, k types.NamespacedName) *vmbenchv1.BenchmarkSuite {
	t.Helper()
	s := &vmbenchv1.BenchmarkSuite{}
	if err := c.Get(context.Background(), k, s); err != nil {
		t.Fatal(err)
	}
	return s
}
