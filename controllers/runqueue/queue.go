package runqueue

import (
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
)

// Queue is the Lease-held run queue of the suites (queue_policy.go decides, queue_lease.go keeps the
// Leases). The suite reconciler asks it whether a suite may start, and tells it when a suite's slot
// may go.
type Queue struct {
	// Client reads the cache (suites, and the pods, VMIs and MPIJobs that hold a slot) and writes
	// the Leases.
	Client client.Client
	// APIReader reads around the cache: the Leases, and the suites before an admission.
	APIReader client.Reader
	Clock     clock.PassiveClock
	// Limits are the admin's limits on the queue.
	Limits Limits
	// Namespace is the manager's own namespace, where the Leases are.
	Namespace string
	// Namespaces are the namespaces the manager runs suites in, as its cache is restricted to them;
	// empty for every namespace. The queue's uncached reads stay within them.
	Namespaces []string
	// Available lists the child kinds whose APIs are installed: only those can hold a slot.
	Available map[schema.GroupVersionKind]bool
	// BeforeSlot, when set (tests), is called just before a suite's Lease is created, with
	// admissionMu held when there are limits.
	BeforeSlot func(*vmbenchv1.BenchmarkSuite)
	// Wake, when set, receives a suite of each namespace whose slot was released, so that the
	// suites in line come back.
	Wake chan event.GenericEvent

	// admissionMu serializes admissions to the run queue.
	admissionMu sync.Mutex
	// book is the run queue's Leases, loaded under bookOnce.
	book     *slotBook
	bookOnce sync.Mutex
}
