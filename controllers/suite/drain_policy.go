package suite

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/controllers/conditions"
)

// A node drain during a Container or Host run (issue 32): `kubectl drain` first cordons the node,
// then evicts its pods. With spec.cluster.disruption WaitForRun the run's PodDisruptionBudget
// (internal/platform/disruption.go) makes the API server refuse those evictions until the run ends;
// with Allow they go through and the member policy names the eviction. Either way the cordon is
// named once in runs[].disruption and a NodeDraining event, so that whoever drains knows why the
// drain waits, or why the run failed. Nothing tells the manager of a cordon (it does not watch
// nodes), so a running run's nodes are read at each of its reconciles, and a reconcile is asked for
// at least every cordonPoll.

// cordonPoll is the longest a running Container or Host run waits for its nodes to be read again.
const cordonPoll = 30 * time.Second

// cordonPoll is the reconciler's CordonPoll, or the default.
func (r *SuiteReconciler) cordonPoll() time.Duration {
	if r.CordonPoll > 0 {
		return r.CordonPoll
	}
	return cordonPoll
}

// drainedPrefix starts runs[].disruption; the cordoned nodes follow it up to "; ".
const drainedPrefix = "cordoned while the run ran (a node drain): node "

// observeCordons names in run.Disruption every node of the run's pods that is unschedulable, beside
// those named before. A node the manager may not read (a namespaced install) or that is gone is
// left out: the eviction, if one follows, is named by the member policy.
func (r *SuiteReconciler) observeCordons(ctx context.Context, suite *vmbenchv1.BenchmarkSuite, run *vmbenchv1.RunStatus, deadline time.Time) error {
	pods := &corev1.PodList{}
	if err := r.List(ctx, pods, client.InNamespace(suite.Namespace),
		client.MatchingLabels{vmbenchv1.LabelSuite: suite.Name, vmbenchv1.LabelRun: run.Name}); err != nil {
		return fmt.Errorf("listing the pods of run %s: %w", run.Name, err)
	}
	named := cordonedNodes(run.Disruption)
	var nodes []string
	for _, pod := range pods.Items {
		n := pod.Spec.NodeName
		if n == "" || pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed ||
			slices.Contains(named, n) || slices.Contains(nodes, n) {
			continue
		}
		nodes = append(nodes, n)
	}
	cordoned := named
	for _, n := range nodes {
		node := &corev1.Node{}
		err := r.APIReader.Get(ctx, client.ObjectKey{Name: n}, node)
		switch {
		case apierrors.IsForbidden(err) || apierrors.IsNotFound(err):
			continue
		case err != nil:
			return fmt.Errorf("reading node %s of run %s: %w", n, run.Name, err)
		}
		if node.Spec.Unschedulable {
			cordoned = append(cordoned, n)
		}
	}
	if len(cordoned) > len(named) {
		run.Disruption = drainMessage(cordoned, run.Name, suite.Spec.Cluster.HoldsDrains(), deadline)
	}
	return nil
}

// drainMessage names the cordoned nodes of a run and what vmbench does about the drain.
func drainMessage(nodes []string, run string, hold bool, deadline time.Time) string {
	nodes = slices.Sorted(slices.Values(nodes))
	msg := drainedPrefix + strings.Join(nodes, ", node ") + "; "
	if hold {
		msg += fmt.Sprintf("the run's PodDisruptionBudget %s refuses the eviction of its pods until the run ends, at the latest at its deadline %s, "+
			"so the drain waits until then (spec.cluster.disruption WaitForRun)", run, deadline.UTC().Format(time.RFC3339))
	} else {
		msg += "spec.cluster.disruption is Allow: the drain evicts the run's pods and the run fails; set it to WaitForRun to hold drains until a run ends"
	}
	return conditions.Truncate(msg, 1024)
}

// cordonedNodes are the nodes a drainMessage names.
func cordonedNodes(msg string) []string {
	list, ok := strings.CutPrefix(msg, drainedPrefix)
	if !ok {
		return nil
	}
	list, _, _ = strings.Cut(list, "; ")
	return strings.Split(list, ", node ")
}
