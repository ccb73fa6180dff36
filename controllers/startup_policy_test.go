package controllers

import (
	"context"
	"fmt"
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

// pagedEvents serves a namespace's events as the API server does, in name order and in pages of
// the asked limit, and records every list.
type pagedEvents struct {
	events []corev1.Event
	lists  []client.ListOptions
}

func (p *pagedEvents) list(_ context.Context, _ client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
	o := client.ListOptions{}
	o.ApplyOptions(opts)
	p.lists = append(p.lists, o)
	start := 0
	if o.Continue != "" {
		start, _ = strconv.Atoi(o.Continue)
	}
	end := len(p.events)
	if o.Limit > 0 && start+int(o.Limit) < end {
		end = start + int(o.Limit)
	}
	out := list.(*corev1.EventList)
	out.Items = append([]corev1.Event(nil), p.events[start:end]...)
	if end < len(p.events) {
		out.Continue = strconv.Itoa(end)
	}
	return nil
}

func warningOf(kind, name string) corev1.Event {
	return corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: name + ".1", Namespace: "bench"}, Type: corev1.EventTypeWarning,
		InvolvedObject: corev1.ObjectReference{Kind: kind, Name: name}, Reason: "FailedCreate"}
}

func TestRunWarningsAreReadInBoundedPages(t *testing.T) {
	var events []corev1.Event
	for i := range 2 * eventPage {
		events = append(events, warningOf("Pod", fmt.Sprintf("a-busy-%04d", i)))
	}
	events = append(events, warningOf("Job", "demo-container-1-launcher"), warningOf("MPIJob", "demo-container-1"))
	for i := range 3 * eventPage {
		events = append(events, warningOf("Pod", fmt.Sprintf("z-busy-%04d", i)))
	}
	p := &pagedEvents{events: events}
	c := fake.NewClientBuilder().WithInterceptorFuncs(interceptor.Funcs{List: p.list}).Build()
	r := &SuiteReconciler{APIReader: c}
	got, err := r.runWarnings(t.Context(), "bench", "demo-container-1")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].InvolvedObject.Name != "demo-container-1-launcher" || got[1].InvolvedObject.Name != "demo-container-1" {
		t.Errorf("run's events %+v", got)
	}
	// Pages 1 and 2 hold other objects' events, page 3 the run's and the first that come after them.
	if len(p.lists) != 3 {
		t.Errorf("%d lists, want 3: the list stops past the run's events", len(p.lists))
	}
	for _, o := range p.lists {
		if o.Limit != eventPage || o.FieldSelector == nil || o.FieldSelector.String() != "type=Warning" || o.Namespace != "bench" {
			t.Errorf("list options: limit %d, fields %v, namespace %q", o.Limit, o.FieldSelector, o.Namespace)
		}
	}

	// A namespace of endless warnings before the run's: at most eventPages pages are read.
	p = &pagedEvents{}
	for i := range int64(eventPages+2) * eventPage {
		p.events = append(p.events, warningOf("Pod", fmt.Sprintf("a-busy-%05d", i)))
	}
	c = fake.NewClientBuilder().WithInterceptorFuncs(interceptor.Funcs{List: p.list}).Build()
	r = &SuiteReconciler{APIReader: c}
	if _, err := r.runWarnings(t.Context(), "bench", "demo-container-1"); err != nil {
		t.Fatal(err)
	}
	if len(p.lists) != eventPages {
		t.Errorf("%d lists, want %d", len(p.lists), eventPages)
	}
}
