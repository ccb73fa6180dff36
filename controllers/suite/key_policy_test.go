package suite

import (
	"errors"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/controllers/masterkey"
)

func pendingSuite() *vmbenchv1.BenchmarkSuite {
	s := keyedSuite()
	s.Status.Runs = []vmbenchv1.RunStatus{{Name: "demo-container-1", Phase: vmbenchv1.RunPending}}
	return s
}

// Without a usable key, a suite not admitted stays in line with the cause; an admitted one, or one
// whose spec is invalid, is not held; with a key, nothing is.
func TestKeyHoldsOnlySuitesNotAdmitted(t *testing.T) {
	fault := &masterkey.MasterKeyFault{Reason: masterkey.ReasonMasterKeyMissing, Message: "the master key Secret x is missing"}
	faulty := &SuiteReconciler{MasterKeyFault: fault}
	held := faulty.keyHoldsAdmission(pendingSuite(), nil)
	if held == nil || held.Reason != masterkey.ReasonMasterKeyMissing ||
		held.Message != "the suite stays in line until the manager has its master key: the master key Secret x is missing" {
		t.Errorf("held = %+v", held)
	}
	st := &vmbenchv1.BenchmarkSuiteStatus{}
	setQueuedByKey(st, held, 3)
	if c := st.Conditions; len(c) != 1 || c[0].Type != vmbenchv1.ConditionQueued || c[0].Status != metav1.ConditionTrue ||
		c[0].Reason != masterkey.ReasonMasterKeyMissing || c[0].Message != held.Message {
		t.Errorf("Queued = %+v", c)
	}

	admitted := pendingSuite()
	admitted.Status.StartTime = &metav1.Time{}
	if c := faulty.keyHoldsAdmission(admitted, nil); c != nil {
		t.Errorf("an admitted suite is held in line: %v", c)
	}
	if c := faulty.keyHoldsAdmission(pendingSuite(), errors.New("bad spec")); c != nil {
		t.Errorf("a suite with an invalid spec is held in line: %v", c)
	}
	if c := (&SuiteReconciler{MasterKey: testMasterKey}).keyHoldsAdmission(pendingSuite(), nil); c != nil {
		t.Errorf("with a key: %v", c)
	}
}

// A run starts under the manager's key ID, or fails with the fault.
func TestKeyToStart(t *testing.T) {
	run := &vmbenchv1.RunStatus{Name: "demo-container-1"}
	if c := (&SuiteReconciler{MasterKey: testMasterKey}).keyToStart(run); c != nil || run.KeyID != masterkey.MasterKeyID(testMasterKey) {
		t.Errorf("with a key: %v, key ID %q", c, run.KeyID)
	}
	run = &vmbenchv1.RunStatus{Name: "demo-container-1"}
	faulty := &SuiteReconciler{MasterKeyFault: &masterkey.MasterKeyFault{Reason: masterkey.ReasonMasterKeyChanged, Message: "the Secret was replaced"}}
	c := faulty.keyToStart(run)
	if c == nil || c.String() != "MasterKeyChanged: run demo-container-1 was not started: the Secret was replaced" || run.KeyID != "" {
		t.Errorf("without a key: %v, key ID %q", c, run.KeyID)
	}
}

// A run is collected under the key it started under; under another key, or without one, it fails
// with both IDs or the fault named.
func TestKeyToCollect(t *testing.T) {
	r := &SuiteReconciler{MasterKey: testMasterKey}
	id := masterkey.MasterKeyID(testMasterKey)
	for _, keyID := range []string{id, ""} {
		if c := r.keyToCollect(&vmbenchv1.RunStatus{Name: "demo-container-1", KeyID: keyID}); c != nil {
			t.Errorf("run under key ID %q: %v", keyID, c)
		}
	}
	c := r.keyToCollect(&vmbenchv1.RunStatus{Name: "demo-container-1", KeyID: "0123456789abcdef"})
	if c == nil || c.Reason != masterkey.ReasonMasterKeyChanged ||
		!strings.HasPrefix(c.String(), "MasterKeyChanged: run demo-container-1 was started under master key ID 0123456789abcdef, "+
			"but the manager's master key is now ID "+id) {
		t.Errorf("run under another key: %v", c)
	}
	faulty := &SuiteReconciler{MasterKeyFault: &masterkey.MasterKeyFault{Reason: masterkey.ReasonMasterKeyMissing, Message: "the Secret is missing"}}
	c = faulty.keyToCollect(&vmbenchv1.RunStatus{Name: "demo-container-1", KeyID: id})
	if c == nil || c.String() != "MasterKeyMissing: the results of run demo-container-1 cannot be verified, so the run is stopped: the Secret is missing" {
		t.Errorf("without a key: %v", c)
	}
}
