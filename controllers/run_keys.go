package controllers

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/internal/platform"
)

// A run's keys are derived from the manager's master key (platform.MasterKey), so the manager never
// reads a Secret outside its own namespace: it creates each run's Secret, and forgets it.

// ReasonKeysRetired fails a run that an earlier vmbench started with the suite's key, which this
// one no longer reads.
const ReasonKeysRetired = "KeysRetired"

// runAuthSecretName is the name of a run's Secret.
func runAuthSecretName(run string) string { return run + "-auth" }

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
// mounts the host key and known_hosts from it (VMs get theirs through cloud-init). It carries the run's
// labels, so that the run's cleanup deletes it, and the suite controls it, so that it goes with the
// suite.
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

// applySecret writes a Secret of a run without ever reading one: it creates it, and when a Secret
// of that name exists, it first sends a JSON patch made of tests alone, which changes nothing and
// fails unless this suite controls the Secret; only then does it replace the data. A failed test
// means the Secret is another suite's (an earlier suite of the same name, being deleted): a cause to
// wait for, as for every other child. Refusals that will not heal by retrying are a cause too.
func (r *SuiteReconciler) applySecret(ctx context.Context, suite *vmbenchv1.BenchmarkSuite, secret *corev1.Secret) (*cause, error) {
	if err := ctrl.SetControllerReference(suite, secret, r.Scheme); err != nil {
		return nil, err
	}
	err := r.Create(ctx, secret, client.FieldOwner(FieldManager))
	if apierrors.IsAlreadyExists(err) {
		err = r.Patch(ctx, secret.DeepCopy(), jsonPatch(controlledBy(suite.UID)), client.FieldOwner(FieldManager))
		// The API server answers a failed test with 422; the patch changes nothing, so nothing
		// else in it can be invalid.
		if apierrors.IsInvalid(err) {
			return &cause{Reason: ReasonChildOfAnotherSuite, Message: fmt.Sprintf("Secret %s exists and is not this suite's; "+
				"vmbench waits until it is deleted, or delete it yourself", secret.Name)}, nil
		}
		if err == nil {
			err = r.Patch(ctx, secret, jsonPatch(append(controlledBy(suite.UID), replaceContent(secret)...)), client.FieldOwner(FieldManager))
		}
	}
	if err == nil || !refusedForGood(err) {
		return nil, err
	}
	return &cause{Reason: ReasonChildRejected, Message: fmt.Sprintf("the API server refused Secret %s: %s", secret.Name, oneLineString(err.Error()))}, nil
}

// controlledBy are JSON patch tests that pass only on an object whose controller is the suite.
func controlledBy(suite types.UID) []map[string]any {
	return []map[string]any{
		{"op": "test", "path": "/metadata/ownerReferences/0/uid", "value": suite},
		{"op": "test", "path": "/metadata/ownerReferences/0/controller", "value": true},
	}
}

// replaceContent sets a Secret's data and labels to those given.
func replaceContent(secret *corev1.Secret) []map[string]any {
	return []map[string]any{
		{"op": "add", "path": "/data", "value": secret.Data},
		{"op": "add", "path": "/metadata/labels", "value": secret.Labels},
	}
}

func jsonPatch(ops []map[string]any) client.Patch {
	body, err := json.Marshal(ops)
	if err != nil {
		panic(err) // strings, bytes and booleans always encode
	}
	return client.RawPatch(types.JSONPatchType, body)
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
