package schedule

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/controllers/conditions"
	"github.com/vmbench/vmbench/controllers/runenv"
	"github.com/vmbench/vmbench/internal/history"
	"github.com/vmbench/vmbench/internal/platform"
)

// spec.triggers.onVersionChange: every poll interval the versions that the latest complete suite ran
// on (its record's environments) are read again from the API server, and the runner images the next
// suite would be created with are taken from the manager's settings; a difference starts a suite at
// once, through the same path and concurrency policy as a cron start, and the versions that started
// it are remembered in status.lastTrigger so that they start no other.

// Bounds of spec.triggers.onVersionChange.
const (
	defaultVersionPoll = 10 * time.Minute
	minVersionPoll     = time.Minute
	maxTriggerChanges  = 8
	// maxTriggerNodes is how many nodes one poll reads: all that one suite's record can name
	// (status.environments holds 4 environments of 8 nodes).
	maxTriggerNodes = 32
)

// currentVersions are the versions read now: the nodes that could be read, by name, the version
// the KubeVirt CR reports ("" when it could not be read), and the runner image reference the next
// suite's runs would be created with, by platform type.
type currentVersions struct {
	Nodes        map[string]vmbenchv1.NodeEnvironment
	KubeVirt     string
	RunnerImages map[vmbenchv1.PlatformType]string
}

// versionChanges lists what differs between the environments of a record and the versions read now,
// as "node n1 kernelVersion 6.1 → 6.8" or "runnerImage: repo:a → repo:b", in the order of the
// record. Only watched versions count, and only where both sides are known: a node that is gone or
// could not be read, or a version or image reference that one side does not report, is no change.
func versionChanges(watch vmbenchv1.OnVersionChange, envs []vmbenchv1.RunEnvironment, cur currentVersions) []string {
	var changes []string
	seenNodes := map[string]bool{}
	kubeVirtDone := false
	for _, env := range envs {
		if next := cur.RunnerImages[env.Platform]; watch.RunnerImage && env.RunnerImageRef != "" && next != "" && next != env.RunnerImageRef {
			if change := fmt.Sprintf("runnerImage: %s → %s", env.RunnerImageRef, next); !slices.Contains(changes, change) {
				changes = append(changes, change)
			}
		}
		if watch.KubeVirt && !kubeVirtDone && env.Platform == vmbenchv1.PlatformVM && env.KubeVirtVersion != "" &&
			cur.KubeVirt != "" && cur.KubeVirt != env.KubeVirtVersion {
			changes = append(changes, fmt.Sprintf("kubeVirtVersion %s → %s", env.KubeVirtVersion, cur.KubeVirt))
			kubeVirtDone = true
		}
		if !watch.Nodes {
			continue
		}
		for _, was := range env.Nodes {
			if seenNodes[was.Name] {
				continue
			}
			seenNodes[was.Name] = true
			now, ok := cur.Nodes[was.Name]
			if !ok {
				continue
			}
			for _, f := range []struct{ name, was, now string }{
				{"kernelVersion", was.KernelVersion, now.KernelVersion},
				{"osImage", was.OSImage, now.OSImage},
				{"containerRuntimeVersion", was.ContainerRuntimeVersion, now.ContainerRuntimeVersion},
				{"kubeletVersion", was.KubeletVersion, now.KubeletVersion},
			} {
				if f.was != "" && f.now != "" && f.was != f.now {
					changes = append(changes, fmt.Sprintf("node %s %s %s → %s", was.Name, f.name, f.was, f.now))
				}
			}
		}
	}
	return changes
}

// latestComplete is the newest complete record, by scheduled time, or nil.
func latestComplete(records []history.Record) *history.Record {
	var latest *history.Record
	for i := range records {
		rec := &records[i]
		if rec.Phase != vmbenchv1.SuiteComplete {
			continue
		}
		if latest == nil || !rec.Scheduled.Before(latest.Scheduled) {
			latest = rec
		}
	}
	return latest
}

// versionPoll is the schedule's poll interval, with its default and minimum.
func versionPoll(watch vmbenchv1.OnVersionChange) time.Duration {
	if watch.PollInterval == nil {
		return defaultVersionPoll
	}
	return max(watch.PollInterval.Duration(), minVersionPoll)
}

// versionCheckDue is when the next check is due: a poll interval after the last one, or after the
// schedule was created. It depends on the status only, so that a check whose status write was lost
// names its suite the same when it is done again.
func versionCheckDue(sched *vmbenchv1.BenchmarkSchedule, poll time.Duration) time.Time {
	last := sched.CreationTimestamp.Time
	if sched.Status.LastVersionCheck != nil {
		last = sched.Status.LastVersionCheck.Time
	}
	return last.Add(poll)
}

// triggerTime is the time a suite started by the check due at due is named after: that minute, but
// after the latest cron start, so that the two never share a name.
func triggerTime(due time.Time, lastSchedule *metav1.Time) time.Time {
	t := due.Truncate(time.Minute)
	if lastSchedule != nil && !t.After(lastSchedule.Time) {
		t = lastSchedule.Truncate(time.Minute).Add(time.Minute)
	}
	return t
}

// triggerOnVersionChange reads the watched versions when a check is due and starts a suite when one
// changed since the latest complete record. It returns when the next check is due.
func (r *ScheduleReconciler) triggerOnVersionChange(ctx context.Context, sched *vmbenchv1.BenchmarkSchedule, seen *scheduleObservation,
	now time.Time) (time.Duration, []scheduleEvent, error) {
	if sched.Spec.Triggers == nil || sched.Spec.Triggers.OnVersionChange == nil {
		return 0, nil, nil
	}
	watch := *sched.Spec.Triggers.OnVersionChange
	if !watch.KubeVirt && !watch.Nodes && !watch.RunnerImage ||
		sched.Spec.Suspend != nil && *sched.Spec.Suspend ||
		meta.IsStatusConditionFalse(sched.Status.Conditions, vmbenchv1.ConditionValid) {
		// Nothing starts; a spec change brings the schedule back.
		return 0, nil, nil
	}
	poll := versionPoll(watch)
	due := versionCheckDue(sched, poll)
	if now.Before(due) {
		return due.Sub(now), nil, nil
	}
	records, err := r.History.List(ctx, sched)
	if err != nil {
		return 0, nil, fmt.Errorf("reading the history of schedule %s to compare versions: %w", sched.Name, err)
	}
	st := &sched.Status
	rec := latestComplete(records)
	if rec == nil {
		// Nothing to compare with until a suite completed.
		st.LastVersionCheck = &metav1.Time{Time: now}
		return poll, nil, nil
	}
	cur, notes, err := r.readVersions(ctx, watch, rec.Environments)
	if err != nil {
		return 0, nil, err
	}
	if watch.RunnerImage {
		cur.RunnerImages = nextRunnerImages(sched.Spec.SuiteTemplate.Spec, r.Images)
	}
	var events []scheduleEvent
	if len(notes) > 0 {
		events = append(events, scheduleEvent{kind: corev1.EventTypeWarning, reason: vmbenchv1.ReasonVersionsNotRead, action: "CheckVersions",
			note: strings.Join(notes, "; ")})
	}
	st.LastVersionCheck = &metav1.Time{Time: now}
	changes := versionChanges(watch, rec.Environments, cur)
	if len(changes) == 0 {
		return poll, events, nil
	}
	hash := runenv.ShortHash(changes, 16)
	if st.LastTrigger != nil && st.LastTrigger.Versions == hash {
		// These versions started a suite already: it runs, or it failed and the next complete
		// suite's record will carry them.
		return poll, events, nil
	}
	at := triggerTime(due, st.LastScheduleTime)
	name := scheduledSuiteName(sched.Name, at)
	said := strings.Join(changes, "; ")
	// A triggered start leaves lastScheduleTime, which is the cron schedule's, as it was.
	lastSchedule := st.LastScheduleTime
	started, skip, err := r.start(ctx, sched, *seen, startDecision{Due: at})
	st.LastScheduleTime = lastSchedule
	if err != nil {
		return 0, nil, err
	}
	if skip != nil {
		msg := skip.Message
		if skip.Reason == vmbenchv1.ReasonConcurrencyForbid {
			msg = fmt.Sprintf("suite %s of this schedule is not finished and spec.concurrencyPolicy is Forbid: the versions are "+
				"compared again in %s, and a suite starts then if that suite's record does not carry them. Set concurrencyPolicy "+
				"to Allow to start beside it, or Replace to delete it and start anew", seen.Active[0].Name, poll)
		}
		events = append(events, scheduleEvent{kind: corev1.EventTypeWarning, reason: vmbenchv1.ReasonVersionChangeWaits, action: "Start",
			note: fmt.Sprintf("versions changed since suite %s (%s), but no suite started: %s", rec.Suite, said, msg)})
		return poll, events, nil
	}
	if started != nil {
		if sched.Spec.ConcurrencyPolicy == vmbenchv1.ConcurrencyReplace {
			seen.Active = nil
		}
		seen.Active = append(seen.Active, started)
	}
	kept := make([]string, 0, min(len(changes), maxTriggerChanges))
	for _, c := range changes[:min(len(changes), maxTriggerChanges)] {
		kept = append(kept, conditions.Truncate(c, 512))
	}
	st.LastTrigger = &vmbenchv1.VersionTrigger{Time: metav1.Time{Time: now}, Suite: name, Changes: kept, Versions: hash}
	events = append(events, scheduleEvent{kind: corev1.EventTypeNormal, reason: vmbenchv1.ReasonVersionChanged, action: "Start",
		note: fmt.Sprintf("started suite %s as versions changed since suite %s: %s", name, rec.Suite, said)})
	return poll, events, nil
}

// nextRunnerImages are the image references the next suite's runs would be created with, by the
// platform types of the suite template: a suite names no image of its own, so they are the
// manager's (--runner-image for the pods of container and host runs, --vm-disk-image for the
// containerDisk of VM runs), as the suite controller creates runs with them.
func nextRunnerImages(spec vmbenchv1.BenchmarkSuiteSpec, images platform.Images) map[vmbenchv1.PlatformType]string {
	// Left out, the platforms are defaulted by the API server to a container and a VM platform.
	types := []vmbenchv1.PlatformType{vmbenchv1.PlatformContainer, vmbenchv1.PlatformVM}
	if len(spec.Platforms) > 0 {
		types = types[:0]
		for _, p := range spec.Platforms {
			types = append(types, p.Type)
		}
	}
	out := map[vmbenchv1.PlatformType]string{}
	for _, t := range types {
		switch t {
		case vmbenchv1.PlatformContainer, vmbenchv1.PlatformHost:
			out[t] = images.Runner
		case vmbenchv1.PlatformVM:
			out[t] = images.VMDisk
		}
	}
	return out
}

// readVersions reads the watched versions of what the environments name: each node by name, at most
// maxTriggerNodes, and the KubeVirt CR. The environments come from a record the manager signed, so
// only nodes the schedule's own suite ran on are read. notes say what could not be read and what to
// grant; errors that waiting may heal are returned.
func (r *ScheduleReconciler) readVersions(ctx context.Context, watch vmbenchv1.OnVersionChange, envs []vmbenchv1.RunEnvironment) (currentVersions, []string, error) {
	reader := r.APIReader
	if reader == nil {
		reader = r.Client
	}
	cur := currentVersions{Nodes: map[string]vmbenchv1.NodeEnvironment{}}
	var notes, forbidden []string
	vm := false
	asked, unread := map[string]bool{}, map[string]bool{}
	for _, env := range envs {
		vm = vm || env.Platform == vmbenchv1.PlatformVM && env.KubeVirtVersion != ""
		if !watch.Nodes {
			continue
		}
		for _, n := range env.Nodes {
			if asked[n.Name] {
				continue
			}
			if len(asked) == maxTriggerNodes {
				unread[n.Name] = true
				continue
			}
			asked[n.Name] = true
			node := &corev1.Node{}
			err := reader.Get(ctx, client.ObjectKey{Name: n.Name}, node)
			switch {
			case apierrors.IsNotFound(err):
				// A node that is gone tells nothing of what the next suite runs on.
				continue
			case apierrors.IsForbidden(err):
				forbidden = append(forbidden, n.Name)
				continue
			case err != nil:
				return cur, nil, fmt.Errorf("reading node %s to compare its versions: %w", n.Name, err)
			}
			cur.Nodes[n.Name] = runenv.NodeEnvironment(node)
		}
	}
	if len(unread) > 0 {
		notes = append(notes, fmt.Sprintf("the record names %d nodes more than the %d one poll reads, so their versions are not compared",
			len(unread), maxTriggerNodes))
	}
	if len(forbidden) > 0 {
		notes = append(notes, fmt.Sprintf("the manager may not get nodes %s, so their versions are not compared: grant it get on nodes, "+
			"or set spec.triggers.onVersionChange.nodes to false", strings.Join(forbidden, ", ")))
	}
	if watch.KubeVirt && vm {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(platform.KubeVirtListGVK)
		err := reader.List(ctx, list)
		switch {
		case err == nil:
			cur.KubeVirt = runenv.KubeVirtVersion(list.Items)
		case meta.IsNoMatchError(err) || apierrors.IsNotFound(err) || apierrors.IsForbidden(err):
			notes = append(notes, fmt.Sprintf("KubeVirt's version could not be read (%v), so it is not compared: check that KubeVirt is "+
				"installed and the manager may list kubevirts.kubevirt.io, or set spec.triggers.onVersionChange.kubeVirt to false", err))
		default:
			return cur, nil, fmt.Errorf("listing KubeVirt CRs to compare KubeVirt's version: %w", err)
		}
	}
	return cur, notes, nil
}
