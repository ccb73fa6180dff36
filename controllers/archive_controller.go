package controllers

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/internal/archive"
)

// The archive keeps a copy of every finished suite, its status and its result tables, in
// S3-compatible object storage (internal/archive has the layout), where it outlives the suite. It is
// a controller of its own beside the suite's: it only reads suites and their ConfigMaps, never
// writes them, and says what it did in events on the suite. A suite is archived once, by UID, as it
// is when it has finished; one deleted before that (while the store was unreachable, say) is not in
// the archive.

// Events of the archive.
const (
	ReasonArchived      = "Archived"
	ReasonArchiveFailed = "ArchiveFailed"
)

// archiveTimeout bounds one suite's archiving; each request has its own, shorter bound.
const archiveTimeout = 10 * time.Minute

// ArchiveReconciler writes finished suites to the archive.
type ArchiveReconciler struct {
	// Client reads suites from the manager's cache.
	client.Client
	// APIReader reads the suite as the API server has it, and its result-table ConfigMaps, which
	// the cache does not hold (cache_policy.go).
	APIReader client.Reader
	Store     archive.Store
	// Prefix is the archive's top directory in the store; may be empty.
	Prefix   string
	Recorder events.EventRecorder

	mu sync.Mutex
	// archived are the suites known to be in the archive, so that each is asked about once.
	archived map[types.NamespacedName]types.UID
}

// +kubebuilder:rbac:groups=vmbench.io,resources=benchmarksuites,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;list
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile archives one suite if it has finished and is not in the archive yet.
func (r *ArchiveReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	suite := &vmbenchv1.BenchmarkSuite{}
	if err := r.Get(ctx, req.NamespacedName, suite); err != nil {
		if apierrors.IsNotFound(err) {
			r.forget(req.NamespacedName)
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}
	if !archivable(suite) || r.isArchived(req.NamespacedName, suite.UID) {
		return ctrl.Result{}, nil
	}
	dir := archive.SuiteDir(r.Prefix, suite.Namespace, suite.Name, string(suite.UID))
	done, err := r.archive(ctx, suite, dir)
	if err != nil {
		r.Recorder.Eventf(suite, nil, corev1.EventTypeWarning, ReasonArchiveFailed, "Archive", "%s",
			truncate(fmt.Sprintf("the suite's results are not archived yet (tried again with backoff; a suite deleted before it is archived is not in the archive): %v", err), 1024))
		// The workqueue's backoff brings the suite back.
		return ctrl.Result{}, err
	}
	r.remember(req.NamespacedName, suite.UID)
	if done != nil {
		log.FromContext(ctx).Info("suite archived", "location", r.Store.Location(dir+"/"), "tables", done.tables)
		r.Recorder.Eventf(suite, nil, corev1.EventTypeNormal, ReasonArchived, "Archive", "%s", truncate(done.message(r.Store.Location(dir+"/")), 1024))
	}
	return ctrl.Result{}, nil
}

// archived is what one archiving wrote.
type archived struct {
	tables int
	// vanished are the table ConfigMaps deleted between listing and reading them.
	vanished []string
}

func (a *archived) message(location string) string {
	msg := fmt.Sprintf("results archived to %s: suite.json and %d result-table ConfigMaps", location, a.tables)
	if len(a.vanished) > 0 {
		msg += fmt.Sprintf("; ConfigMaps %v were deleted before they could be archived", a.vanished)
	}
	return msg
}

// archive writes the suite's tables, then suite.json, unless suite.json is there already; nil
// when nothing was written.
func (r *ArchiveReconciler) archive(ctx context.Context, cached *vmbenchv1.BenchmarkSuite, dir string) (*archived, error) {
	ctx, cancel := context.WithTimeout(ctx, archiveTimeout)
	defer cancel()
	if found, err := r.Store.Exists(ctx, archive.SuiteKey(dir)); err != nil || found {
		return nil, err
	}
	// The suite as the API server has it now, with the status the suite controller wrote last.
	suite := &vmbenchv1.BenchmarkSuite{}
	if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(cached), suite); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("reading the suite: %w", err)
	}
	if suite.UID != cached.UID || !archivable(suite) {
		return nil, nil
	}
	names, err := r.tableMaps(ctx, suite)
	if err != nil {
		return nil, err
	}
	done := &archived{}
	for _, name := range names {
		cm := &corev1.ConfigMap{}
		if err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: suite.Namespace, Name: name}, cm); err != nil {
			if apierrors.IsNotFound(err) {
				done.vanished = append(done.vanished, name)
				continue
			}
			return nil, fmt.Errorf("reading ConfigMap %s: %w", name, err)
		}
		if !suiteControls(cm, suite) {
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

// tableMaps names the suite's result-table ConfigMaps, listed as metadata only: their data is read
// one at a time, as a suite's tables may take hundreds of MiB.
func (r *ArchiveReconciler) tableMaps(ctx context.Context, suite *vmbenchv1.BenchmarkSuite) ([]string, error) {
	list := metadataList(corev1.SchemeGroupVersion.WithKind("ConfigMap"))
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
}

func (r *ArchiveReconciler) forget(key types.NamespacedName) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.archived, key)
}

// SetupWithManager watches suites that have finished.
func (r *ArchiveReconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Store == nil {
		return fmt.Errorf("the archive controller has no store")
	}
	return ctrl.NewControllerManagedBy(mgr).
		For(&vmbenchv1.BenchmarkSuite{}, builder.WithPredicates(predicate.NewPredicateFuncs(func(obj client.Object) bool {
			s, ok := obj.(*vmbenchv1.BenchmarkSuite)
			return ok && archivable(s)
		}))).
		Named("archive").
		WithOptions(controller.Options{ReconciliationTimeout: archiveTimeout + time.Minute}).
		Complete(r)
}
