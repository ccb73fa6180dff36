package suite

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/controllers/conditions"
	"github.com/vmbench/vmbench/controllers/suite/failure"
	"github.com/vmbench/vmbench/internal/platform"
)

// A run's keys are derived from the manager's master key (platform.MasterKey), so the manager never
// reads a Secret outside its own namespace: it creates each run's Secret, and forgets it.

// ReasonKeysRetired fails a run that an earlier vmbench started with the suite's key, which this
// one no longer reads.
const ReasonKeysRetired = "KeysRetired"

// runAuthSecretName is the name of a run's Secret: the run's name, then a hash of the UID of the
// ConfigMap that owns the run's Secrets (runSecretsOwner).
func runAuthSecretName(run platform.Run) string { return platform.SecretName(run, run.Name+"-auth") }

// runAuth derives a run's keys: the frame token, the host key of its nodes' sshd with the
// known_hosts that pins it, and the SSH key pair of a VM run's master.
func (r *SuiteReconciler) runAuth(suite *vmbenchv1.BenchmarkSuite, planned plannedRun) (platform.Auth, error) {
	return r.MasterKey.RunAuth(suite.UID, planned.Name, planned.Platform.Type == vmbenchv1.PlatformVM)
}

// frameKeysOf derives the frame tokens of every run of the suite, for reading run's log.
func (r *SuiteReconciler) frameKeysOf(suite *vmbenchv1.BenchmarkSuite, run string) (frameKeys, error) {
	keys := frameKeys{run: run, tokens: map[string][]byte{}}
	for _, p := range plannedRuns(suite) {
		token, err := r.MasterKey.RunToken(suite.UID, p.Name)
		if err != nil {
			return frameKeys{}, err
		}
		keys.tokens[p.Name] = token
	}
	if keys.tokens[run] == nil {
		return frameKeys{}, fmt.Errorf("run %s is not one of the suite's runs", run)
	}
	return keys, nil
}

// runAuthSecret hands a run its keys: the launcher reads its token from it, and every runner pod
// mounts the host key and known_hosts from it (VMs get theirs through cloud-init). It carries the
// run's labels, which the admission policy on the manager's Secrets asks for.
func runAuthSecret(run platform.Run) *corev1.Secret {
	return &corev1.Secret{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{
			Name: run.AuthSecret, Namespace: run.Suite.Namespace,
			Labels: map[string]string{
				vmbenchv1.LabelSuite: run.Suite.Name, vmbenchv1.LabelRun: run.Name, vmbenchv1.LabelPlatform: run.Platform.Name,
			},
		},
		Type: corev1.SecretTypeOpaque,
		Data: run.Auth.Data(),
	}
}

// runSecretsOwner is the ConfigMap that owns a run's Secrets. The manager may create Secrets and
// nothing else (not read, patch or delete them, which would let it read any Secret): so each run's
// Secrets are owned by this run-scoped ConfigMap, which the suite controls and the run's cleanup
// deletes like its other children; the garbage collector then deletes the Secrets. It holds no
// data.
func runSecretsOwner(suite *vmbenchv1.BenchmarkSuite, run platform.Run) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{
			Name: secretsOwnerName(run), Namespace: suite.Namespace,
			Labels: map[string]string{
				vmbenchv1.LabelSuite: suite.Name, vmbenchv1.LabelRun: run.Name, vmbenchv1.LabelPlatform: run.Platform.Name,
			},
			Annotations: map[string]string{
				"vmbench.io/purpose": "owns the run's Secrets, which go with it",
			},
		},
	}
}

func secretsOwnerName(run platform.Run) string { return run.Name + "-secrets" }

// ensureSecretsOwner returns the UID of the ConfigMap that owns a run's Secrets, creating it when
// missing. One that another suite controls, or that is being deleted, is a cause to wait for.
//
// At a run's first start it does not exist, so it is created without a read first: one round trip
// instead of two in the slowest reconcile of a burst (docs/performance.md, "Fourth pass"). When the
// create fails for any reason (it exists, or a refusal, or a fault), the answer is the one the read
// first gave: the ConfigMap is read, and created again only when it is missing, so that one that
// exists is judged by its owner and a refusal by the create that follows the read.
func (r *SuiteReconciler) ensureSecretsOwner(ctx context.Context, suite *vmbenchv1.BenchmarkSuite, run platform.Run) (types.UID, *conditions.Cause, error) {
	owner := runSecretsOwner(suite, run)
	if err := ctrl.SetControllerReference(suite, owner, r.Scheme); err != nil {
		return "", nil, err
	}
	if created := owner.DeepCopy(); r.Create(ctx, created, client.FieldOwner(vmbenchv1.FieldManager)) == nil {
		return created.UID, nil, nil
	}
	existing := &corev1.ConfigMap{}
	err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(owner), existing)
	switch {
	case err == nil:
		if held := ownedHere(suite, existing, "ConfigMap"); held != nil {
			return "", held, nil
		}
		return existing.UID, nil, nil
	case !apierrors.IsNotFound(err):
		return "", nil, fmt.Errorf("reading ConfigMap %s: %w", owner.Name, err)
	}
	err = r.Create(ctx, owner, client.FieldOwner(vmbenchv1.FieldManager))
	if err != nil && refusedForGood(err) {
		return "", &conditions.Cause{Reason: failure.ReasonChildRejected, Message: fmt.Sprintf("the API server refused ConfigMap %s: %s", owner.Name, conditions.OneLineString(err.Error()))}, nil
	}
	if err != nil {
		return "", nil, fmt.Errorf("creating ConfigMap %s: %w", owner.Name, err)
	}
	return owner.UID, nil, nil
}

// ownSecrets makes the run's ConfigMap <run>-secrets, of UID run.SecretsOwner, the owner of every
// Secret among the run's children.
func ownSecrets(objs []client.Object, run platform.Run) {
	for _, obj := range objs {
		if _, ok := obj.(*corev1.Secret); ok {
			obj.SetOwnerReferences([]metav1.OwnerReference{{
				APIVersion: "v1", Kind: "ConfigMap", Name: secretsOwnerName(run), UID: run.SecretsOwner, Controller: ptr.To(true),
			}})
		}
	}
}

// createSecret creates a Secret of a run, and never reads, patches or deletes one. Its name ends
// with a hash of its owner's UID, so a Secret of that name can only be an earlier attempt of this
// run's start, with the same content derived from the master key: AlreadyExists is success. A
// refusal that will not heal by retrying is a cause.
func (r *SuiteReconciler) createSecret(ctx context.Context, secret *corev1.Secret) (*conditions.Cause, error) {
	if len(secret.OwnerReferences) == 0 {
		return nil, fmt.Errorf("secret %s has no owner: the garbage collector could never delete it", secret.Name)
	}
	err := r.Create(ctx, secret, client.FieldOwner(vmbenchv1.FieldManager))
	if err == nil || apierrors.IsAlreadyExists(err) || !refusedForGood(err) {
		return nil, client.IgnoreAlreadyExists(err)
	}
	return &conditions.Cause{Reason: failure.ReasonChildRejected, Message: fmt.Sprintf("the API server refused Secret %s: %s", secret.Name, conditions.OneLineString(err.Error()))}, nil
}

// markPerRunKeys records on a run's children that its runner signs with the run's own key.
func markPerRunKeys(objs []client.Object) {
	for _, obj := range objs {
		annotations := obj.GetAnnotations()
		if annotations == nil {
			annotations = map[string]string{}
		}
		annotations[vmbenchv1.AnnotationKeys] = vmbenchv1.KeysPerRun
		obj.SetAnnotations(annotations)
	}
}

// startedWithSuiteKeys reports whether a run's workload (its MPIJob or VMIs, the kinds given) was
// made by an earlier vmbench, whose runner signs with the suite's key from Secret <suite>-auth: this
// vmbench reads no Secret, so such a run's frames cannot be verified.
func startedWithSuiteKeys(children []client.Object, kinds []schema.GroupVersionKind) bool {
	for _, obj := range children {
		if !slices.Contains(kinds, obj.GetObjectKind().GroupVersionKind()) {
			continue
		}
		if obj.GetAnnotations()[vmbenchv1.AnnotationKeys] != vmbenchv1.KeysPerRun {
			return true
		}
	}
	return false
}

// keysRetired is the failure of a run started with the suite's key.
func keysRetired(suite *vmbenchv1.BenchmarkSuite, run string) platform.Outcome {
	return platform.Outcome{Phase: platform.PhaseFailed, Message: fmt.Sprintf("%s: run %s was started by an earlier vmbench, whose runner "+
		"signs results with the suite's key (Secret %s-auth); this vmbench derives a key per run and reads no Secret, so the run's "+
		"results cannot be verified and the run is stopped; later runs go on with keys of their own", ReasonKeysRetired, run, suite.Name)}
}
