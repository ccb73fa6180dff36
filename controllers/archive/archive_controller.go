package archive

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/controllers/archivemark"
	"github.com/vmbench/vmbench/controllers/cachepolicy"
	"github.com/vmbench/vmbench/controllers/conditions"
	"github.com/vmbench/vmbench/internal/archive"
	"github.com/vmbench/vmbench/internal/tables"
)

// The archive keeps a copy of every finished suite, its status and its result tables, in
// S3-compatible object storage (internal/archive has the layout), where it outlives the suite. It is
// a controller of its own beside the suite's: it reads suites and their ConfigMaps, and writes only
// one annotation on a suite it has archived (AnnotationArchived when the archive holds the suite
// whole, AnnotationArchiveIncomplete when some tables were gone before they could be copied), which
// a schedule waits for before it deletes the suite. A suite is archived once, by UID, as it is when
// it has finished; one deleted before that is not in the archive, and a Warning says so.

// Events of the archive.
const (
	ReasonArchived          = "Archived"
	ReasonArchiveFailed     = "ArchiveFailed"
	ReasonArchiveIncomplete = "ArchiveIncomplete"
	ReasonDeletedUnarchived = "DeletedBeforeArchive"
)

// archiveTimeout bounds one suite's archiving; each request has its own, shorter bound.
const archiveTimeout = 10 * time.Minute

// ArchiveReconciler writes finished suites to the archive.
type ArchiveReconciler struct {
	// Client reads suites from the manager's cache and marks the ones archived.
	client.Client
	// APIReader reads the suite as the API server has it, and its result-table ConfigMaps, which
	// the cache does not hold (cache_policy.go).
	APIReader client.Reader
	Store     archive.Store
	// Prefix is the archive's top directory in the store; may be empty.
	Prefix   string
	Recorder events.EventRecorder

	mu sync.Mutex
	// archived are the suites known to be marked archived, so that each is asked about once.
	archived map[types.NamespacedName]types.UID
	// unarchived are the finished suites seen and not archived yet, so that one deleted before its
	// archive was written is said to be lost.
	unarchived map[types.NamespacedName]types.UID
}

// +kubebuilder:rbac:groups=vmbench.io,resources=benchmarksuites,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;list
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile archives one suite if it has finished and is not in the archive yet.
func (r *ArchiveReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	suite := &vmbenchv1.BenchmarkSuite{}
	if err := r.Get(ctx, req.NamespacedName, suite); err != nil {
		if apierrors.IsNotFound(err) {
			if uid, lost := r.forget(req.NamespacedName); lost {
				r.deletedUnarchived(ctx, req.NamespacedName, uid)
			}
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}
	if !archivemark.Archivable(suite) || r.isArchived(req.NamespacedName, suite.UID) {
		return ctrl.Result{}, nil
	}
	if archivemark.Marked(suite) {
		r.remember(req.NamespacedName, suite.UID)
		return ctrl.Result{}, nil
	}
	r.seeUnarchived(req.NamespacedName, suite.UID)
	dir := archive.SuiteDir(r.Prefix, suite.Namespace, suite.Name, string(suite.UID))
	done, err := r.archive(ctx, suite, dir)
	if err != nil {
		logArchiveError(ctx, err)
		r.Recorder.Eventf(suite, nil, corev1.EventTypeWarning, ReasonArchiveFailed, "Archive", "%s",
			conditions.Truncate(fmt.Sprintf("the suite's results are not archived yet (tried again with backoff; a schedule keeps the suite until they are): %v", err), 1024))
		// The workqueue's backoff brings the suite back.
		return ctrl.Result{}, err
	}
	if done.gone {
		r.forget(req.NamespacedName)
		r.deletedUnarchived(ctx, req.NamespacedName, suite.UID)
		return ctrl.Result{}, nil
	}
	if err := r.mark(ctx, suite, done); err != nil {
		return ctrl.Result{}, err
	}
	r.remember(req.NamespacedName, suite.UID)
	location := r.Store.Location(dir + "/")
	log.FromContext(ctx).Info("suite archived", "location", location, "tables", done.tables, "missing", done.missing, "written", done.written)
	switch {
	case len(done.missing) > 0:
		r.Recorder.Eventf(suite, nil, corev1.EventTypeWarning, ReasonArchiveIncomplete, "Archive", "%s", conditions.Truncate(done.message(location), 1024))
	case done.written:
		r.Recorder.Eventf(suite, nil, corev1.EventTypeNormal, ReasonArchived, "Archive", "%s", conditions.Truncate(done.message(location), 1024))
	}
	return ctrl.Result{}, nil
}

// logArchiveError logs what the event leaves out: the access key ID the store refused, which is
// the manager's business, not the suite's namespace's.
func logArchiveError(ctx context.Context, err error) {
	var s3err *archive.Error
	if errors.As(err, &s3err) && s3err.AccessKeyID != "" {
		log.FromContext(ctx).Info("archiving failed", "accessKeyID", s3err.AccessKeyID, "credentials", s3err.Credentials, "error", err.Error())
	}
}

// archived is what one archiving found and wrote.
type archived struct {
	// written is false when suite.json was in the archive already.
	written bool
	tables  int
	// missing are the table ConfigMaps deleted before they could be archived, and the benchmarks
	// whose tables in status the archived ConfigMaps do not all hold.
	missing []string
	// gone is true when the suite itself was deleted (or replaced by another of its name) before
	// its archive was written.
	gone bool
}

func (a *archived) message(location string) string {
	if !a.written {
		return fmt.Sprintf("results were archived to %s already", location)
	}
	msg := fmt.Sprintf("results archived to %s: suite.json and %d result-table ConfigMaps", location, a.tables)
	if len(a.missing) > 0 {
		msg += fmt.Sprintf("; the archive is incomplete: result tables were deleted before they could be archived (%s; suite.json names them "+
			"in annotation %s). A schedule keeps this suite: delete it by hand once you no longer need it", strings.Join(a.missing, "; "),
			vmbenchv1.AnnotationArchiveIncomplete)
	}
	return msg
}

// mark puts the archive's annotation on the suite: AnnotationArchived only when the archive holds
// it whole.
func (r *ArchiveReconciler) mark(ctx context.Context, suite *vmbenchv1.BenchmarkSuite, done *archived) error {
	orig := suite.DeepCopy()
	if suite.Annotations == nil {
		suite.Annotations = map[string]string{}
	}
	if len(done.missing) > 0 {
		suite.Annotations[vmbenchv1.AnnotationArchiveIncomplete] = incompleteNote(suite.UID, done.missing)
	} else {
		suite.Annotations[vmbenchv1.AnnotationArchived] = string(suite.UID)
	}
	// Without the resourceVersion, so that the schedule's own mark in between is no conflict; a
	// suite of the same name made since carries another UID, which the mark does not name.
	if err := r.Patch(ctx, suite, client.MergeFrom(orig)); err != nil {
		if apierrors.IsNotFound(err) {
			// Archived, then deleted: nothing was lost.
			return nil
		}
		return fmt.Errorf("marking suite %s archived: %w", suite.Name, err)
	}
	return nil
}

func incompleteNote(uid types.UID, missing []string) string {
	return conditions.Truncate(fmt.Sprintf("%s: result tables were deleted before they could be archived: %s", uid, strings.Join(missing, "; ")), 1024)
}

// deletedUnarchived says, in the log and in an event on the suite that is gone, that a finished
// suite was deleted before the archive held it.
func (r *ArchiveReconciler) deletedUnarchived(ctx context.Context, key types.NamespacedName, uid types.UID) {
	log.FromContext(ctx).Info("WARNING: a finished suite was deleted before it was archived; its results are not in the archive",
		"suite", key.String(), "uid", uid)
	gone := &vmbenchv1.BenchmarkSuite{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name, UID: uid}}
	r.Recorder.Eventf(gone, nil, corev1.EventTypeWarning, ReasonDeletedUnarchived, "Archive", "%s", conditions.Truncate(fmt.Sprintf(
		"suite %s (uid %s) was deleted before the archive held it: its results are not in the archive. A schedule waits for the archive "+
			"before it deletes a suite; someone or something else deleted this one", key.Name, uid), 1024))
}

// archive writes the suite's tables, then suite.json, unless suite.json is there already.
func (r *ArchiveReconciler) archive(ctx context.Context, cached *vmbenchv1.BenchmarkSuite, dir string) (*archived, error) {
	ctx, cancel := context.WithTimeout(ctx, archiveTimeout)
	defer cancel()
	found, err := r.Store.Exists(ctx, archive.SuiteKey(dir))
	if err != nil {
		return nil, err
	}
	if found {
		// Written by an earlier pass whose mark was lost (a restart in between): what it wrote says
		// whether it is whole.
		return r.archivedBefore(ctx, dir)
	}
	// The suite as the API server has it now, with the status the suite controller wrote last.
	suite := &vmbenchv1.BenchmarkSuite{}
	if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(cached), suite); err != nil {
		if apierrors.IsNotFound(err) {
			return &archived{gone: true}, nil
		}
		return nil, fmt.Errorf("reading the suite: %w", err)
	}
	if suite.UID != cached.UID {
		return &archived{gone: true}, nil
	}
	if !archivemark.Archivable(suite) {
		return nil, fmt.Errorf("suite %s is no longer finished as the API server has it; it is archived once it is", suite.Name)
	}
	names, err := r.tableMaps(ctx, suite)
	if err != nil {
		return nil, err
	}
	done := &archived{written: true}
	held := map[tableGroup]int32{}
	for _, name := range names {
		cm := &corev1.ConfigMap{}
		if err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: suite.Namespace, Name: name}, cm); err != nil {
			if apierrors.IsNotFound(err) {
				done.missing = append(done.missing, name)
				continue
			}
			return nil, fmt.Errorf("reading ConfigMap %s: %w", name, err)
		}
		if !metav1.IsControlledBy(cm, suite) {
			done.missing = append(done.missing, name)
			continue
		}
		body, err := archiveDocument(cm, corev1.SchemeGroupVersion.WithKind("ConfigMap"))
		if err != nil {
			return nil, err
		}
		if err := r.Store.Put(ctx, archive.TableKey(dir, name), body); err != nil {
			return nil, err
		}
		done.tables++
		countTables(held, cm)
	}
	done.missing = append(done.missing, shortTables(&suite.Status, held)...)
	if len(done.missing) > 0 {
		// suite.json names what is missing, so that it never passes for a whole archive.
		if suite.Annotations == nil {
			suite.Annotations = map[string]string{}
		}
		suite.Annotations[vmbenchv1.AnnotationArchiveIncomplete] = incompleteNote(suite.UID, done.missing)
	}
	body, err := archiveDocument(suite, vmbenchv1.GroupVersion.WithKind("BenchmarkSuite"))
	if err != nil {
		return nil, err
	}
	if err := r.Store.Put(ctx, archive.SuiteKey(dir), body); err != nil {
		return nil, err
	}
	return done, nil
}

// tableGroup is a benchmark on a platform, as status.results counts its tables.
type tableGroup struct{ benchmark, platform string }

// countTables adds the tables a result-table ConfigMap holds to held.
func countTables(held map[tableGroup]int32, cm *corev1.ConfigMap) {
	for key := range cm.Data {
		if benchmark, _, _, ok := tables.ParseKey(key); ok {
			held[tableGroup{benchmark, cm.Labels[vmbenchv1.LabelPlatform]}]++
		}
	}
}

// shortTables names the benchmarks whose tables status counts (results[].tables) and the archived
// ConfigMaps do not all hold: a ConfigMap deleted before the listing leaves nothing else to miss.
func shortTables(st *vmbenchv1.BenchmarkSuiteStatus, held map[tableGroup]int32) []string {
	var out []string
	for _, r := range st.Results {
		if got := held[tableGroup{r.Benchmark, r.Platform}]; got < r.Tables {
			out = append(out, fmt.Sprintf("%s on %s: %d of the %d tables in status", r.Benchmark, r.Platform, got, r.Tables))
		}
	}
	return out
}

// archivedBefore reads the suite.json an earlier pass wrote, for whether it names missing tables.
func (r *ArchiveReconciler) archivedBefore(ctx context.Context, dir string) (*archived, error) {
	body, err := r.Store.Get(ctx, archive.SuiteKey(dir))
	if err != nil {
		return nil, err
	}
	var earlier metav1.PartialObjectMetadata
	if err := json.Unmarshal(body, &earlier); err != nil {
		return nil, fmt.Errorf("reading %s, written by an earlier pass: %w", archive.SuiteKey(dir), err)
	}
	done := &archived{}
	if note, ok := earlier.Annotations[vmbenchv1.AnnotationArchiveIncomplete]; ok {
		_, missing, _ := strings.Cut(note, "before they could be archived: ")
		done.missing = strings.Split(missing, "; ")
	}
	return done, nil
}

// tableMaps names the suite's result-table ConfigMaps, listed as metadata only: their data is read
// one at a time, as a suite's tables may take hundreds of MiB.
func (r *ArchiveReconciler) tableMaps(ctx context.Context, suite *vmbenchv1.BenchmarkSuite) ([]string, error) {
	list := cachepolicy.MetadataList(corev1.SchemeGroupVersion.WithKind("ConfigMap"))
	if err := r.APIReader.List(ctx, list, client.InNamespace(suite.Namespace),
		client.MatchingLabels{vmbenchv1.LabelSuite: suite.Name}, client.HasLabels{vmbenchv1.LabelTablesOf}); err != nil {
		return nil, fmt.Errorf("listing the suite's result-table ConfigMaps: %w", err)
	}
	return ownedNames(list.Items, suite), nil
}

func (r *ArchiveReconciler) isArchived(key types.NamespacedName, uid types.UID) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.archived[key] == uid
}

func (r *ArchiveReconciler) remember(key types.NamespacedName, uid types.UID) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.archived == nil {
		r.archived = map[types.NamespacedName]types.UID{}
	}
	r.archived[key] = uid
	delete(r.unarchived, key)
}

func (r *ArchiveReconciler) seeUnarchived(key types.NamespacedName, uid types.UID) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.unarchived == nil {
		r.unarchived = map[types.NamespacedName]types.UID{}
	}
	r.unarchived[key] = uid
}

// forget drops what is known of the suite, and says whether it was seen finished and not archived.
func (r *ArchiveReconciler) forget(key types.NamespacedName) (types.UID, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.archived, key)
	uid, lost := r.unarchived[key]
	delete(r.unarchived, key)
	return uid, lost
}

// SetupWithManager watches suites that have finished.
func (r *ArchiveReconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Store == nil {
		return fmt.Errorf("the archive controller has no store")
	}
	return ctrl.NewControllerManagedBy(mgr).
		For(&vmbenchv1.BenchmarkSuite{}, builder.WithPredicates(predicate.NewPredicateFuncs(func(obj client.Object) bool {
			s, ok := obj.(*vmbenchv1.BenchmarkSuite)
			return ok && archivemark.Archivable(s)
		}))).
		Named("archive").
		WithOptions(controller.Options{ReconciliationTimeout: archiveTimeout + time.Minute}).
		Complete(r)
}
