package archivemark

import (
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
)

// The archive's marks on a suite: what the archive reconciler writes once it holds a suite, and the
// schedule reads before it prunes one.

// archivable says whether a suite has finished for good, so that it is archived: Complete or
// Failed. A suite that failed for an invalid spec ran nothing and may still be fixed and run, so it
// is archived only once it has run.
func Archivable(s *vmbenchv1.BenchmarkSuite) bool {
	switch s.Status.Phase {
	case vmbenchv1.SuiteComplete:
		return true
	case vmbenchv1.SuiteFailed:
		failed := meta.FindStatusCondition(s.Status.Conditions, vmbenchv1.ConditionFailed)
		return failed == nil || failed.Reason != vmbenchv1.ReasonInvalidSpec
	}
	return false
}

// archiveMarked says whether the suite carries the archive's mark for its own UID, whole or not.
func Marked(s *vmbenchv1.BenchmarkSuite) bool {
	return Whole(s) || strings.HasPrefix(s.Annotations[vmbenchv1.AnnotationArchiveIncomplete], string(s.UID)+":")
}

// archivedWhole says whether the archive holds the suite whole, by the mark it put on the suite.
func Whole(s *vmbenchv1.BenchmarkSuite) bool {
	return s.UID != "" && s.Annotations[vmbenchv1.AnnotationArchived] == string(s.UID)
}
