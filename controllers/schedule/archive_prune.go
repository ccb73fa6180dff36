package schedule

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/controllers/archivemark"
	"github.com/vmbench/vmbench/controllers/conditions"
	"github.com/vmbench/vmbench/internal/metrics"
)

// With an archive, a schedule deletes a finished suite beyond its history limits only once the
// archive has marked it archived whole (AnnotationArchived with the suite's UID): a schedule's
// history keeps a record of each suite, but only the archive keeps its full status and tables.
// While the store is down, or when a suite's archive is incomplete, the schedule keeps the suite
// and says so in the condition AwaitingArchive, a Warning event and
// vmbench_schedule_suites_awaiting_archive.

// maxNamedAwaiting bounds the suites the condition and the event name; the rest are counted.
const maxNamedAwaiting = 10

// awaitsArchive says whether the schedule must keep a suite it would delete: the manager archives
// suites, this one is to be archived, and the archive does not hold it whole yet.
func awaitsArchive(archiving bool, s *vmbenchv1.BenchmarkSuite) bool {
	return archiving && archivemark.Archivable(s) && !archivemark.Whole(s)
}

// setAwaitingArchive sets the condition AwaitingArchive from the suites kept for the archive, and
// exports their number; the event is a Warning when the suites kept change. Without an archive the
// condition and the series are removed.
func setAwaitingArchive(sched *vmbenchv1.BenchmarkSchedule, archiving bool, kept []*vmbenchv1.BenchmarkSuite) *scheduleEvent {
	if !archiving {
		meta.RemoveStatusCondition(&sched.Status.Conditions, vmbenchv1.ConditionAwaitingArchive)
		metrics.ForgetScheduleAwaitingArchive(sched.Namespace, sched.Name)
		return nil
	}
	metrics.RecordScheduleAwaitingArchive(sched.Namespace, sched.Name, len(kept))
	before := meta.FindStatusCondition(sched.Status.Conditions, vmbenchv1.ConditionAwaitingArchive)
	c := metav1.Condition{Type: vmbenchv1.ConditionAwaitingArchive, Status: metav1.ConditionFalse, Reason: vmbenchv1.ReasonNothingAwaitsArchive,
		Message:            "no suite beyond the history limits waits for the archive: each is deleted once the archive holds it whole",
		ObservedGeneration: sched.Generation}
	var ev *scheduleEvent
	if len(kept) > 0 {
		c.Status, c.Reason, c.Message = metav1.ConditionTrue, vmbenchv1.ReasonAwaitingArchive, awaitingArchiveMessage(kept)
		if before == nil || before.Status != metav1.ConditionTrue || before.Message != c.Message {
			ev = &scheduleEvent{kind: corev1.EventTypeWarning, reason: vmbenchv1.ReasonAwaitingArchive, action: "Delete", note: c.Message}
		}
	}
	meta.SetStatusCondition(&sched.Status.Conditions, c)
	return ev
}

// awaitingArchiveMessage names the suites kept, those not archived yet apart from those whose
// archive is incomplete, each with what to do.
func awaitingArchiveMessage(kept []*vmbenchv1.BenchmarkSuite) string {
	var pending, incomplete []string
	for _, s := range kept {
		if archivemark.Marked(s) {
			incomplete = append(incomplete, s.Name)
		} else {
			pending = append(pending, s.Name)
		}
	}
	var parts []string
	if len(pending) > 0 {
		parts = append(parts, fmt.Sprintf("%d finished suites beyond the history limits are kept until the archive holds them whole: %s. "+
			"The archive tries again with backoff; their ArchiveFailed events (kubectl describe benchmarksuite %s) give the store's error "+
			"and what to change", len(pending), nameList(pending), pending[0]))
	}
	if len(incomplete) > 0 {
		parts = append(parts, fmt.Sprintf("%d suites are kept as their archive is incomplete (result tables were deleted before they "+
			"could be archived; annotation %s names them): %s. Delete them by hand once you no longer need them",
			len(incomplete), vmbenchv1.AnnotationArchiveIncomplete, nameList(incomplete)))
	}
	return conditions.Truncate(strings.Join(parts, "; "), 1024)
}

// nameList is the sorted names, at most maxNamedAwaiting of them, and how many more.
func nameList(names []string) string {
	names = slices.Sorted(slices.Values(names))
	if len(names) <= maxNamedAwaiting {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:maxNamedAwaiting], ", "), len(names)-maxNamedAwaiting)
}
