package suite

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/controllers/conditions"
	"github.com/vmbench/vmbench/controllers/masterkey"
)

// What the manager's master key decides for a suite: whether it may be admitted, and whether a run
// may start or be collected. How the key is loaded and recorded is master_key.go.

// masterKeyCause is why the manager cannot use its master key, nil when it can.
func (r *SuiteReconciler) masterKeyCause() *conditions.Cause {
	if f := r.MasterKeyFault; f != nil {
		return &conditions.Cause{Reason: f.Reason, Message: f.Message, Terminal: true}
	}
	if err := r.MasterKey.Validate(); err != nil {
		return &conditions.Cause{Reason: masterkey.ReasonMasterKeyInvalid, Message: err.Error() + "; restart the manager", Terminal: true}
	}
	return nil
}

// keyHoldsAdmission keeps a suite that is not admitted yet in line while the manager has no usable
// master key: its runs could neither start nor be collected, and it takes no run slot.
func (r *SuiteReconciler) keyHoldsAdmission(suite *vmbenchv1.BenchmarkSuite, invalidSpec error) *conditions.Cause {
	if invalidSpec != nil || suite.Status.StartTime != nil || suite.Status.ActiveRun() == nil {
		return nil
	}
	c := r.masterKeyCause()
	if c == nil {
		return nil
	}
	return &conditions.Cause{Reason: c.Reason, Message: "the suite stays in line until the manager has its master key: " + c.Message}
}

// setQueuedByKey says in the Queued condition that the suite stays in line for its master key.
func setQueuedByKey(st *vmbenchv1.BenchmarkSuiteStatus, held *conditions.Cause, generation int64) {
	if held == nil {
		return
	}
	meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: vmbenchv1.ConditionQueued, Status: metav1.ConditionTrue,
		Reason: held.Reason, Message: conditions.Truncate(held.Message, 1024), ObservedGeneration: generation})
}

// keyToStart is why a run cannot start for want of the master key, nil when it can; otherwise it
// records in the run the ID of the key that its keys derive from.
func (r *SuiteReconciler) keyToStart(active *vmbenchv1.RunStatus) *conditions.Cause {
	if c := r.masterKeyCause(); c != nil {
		return &conditions.Cause{Reason: c.Reason, Message: fmt.Sprintf("run %s was not started: %s", active.Name, c.Message), Terminal: true}
	}
	active.KeyID = masterkey.MasterKeyID(r.MasterKey)
	return nil
}

// keyToCollect is why a run's results cannot be verified for want of its master key, nil when they
// can: the manager has no usable key, or the run was started under another one (the key was
// rotated while it ran). A run without a key ID was started by an earlier vmbench: its frames say.
func (r *SuiteReconciler) keyToCollect(active *vmbenchv1.RunStatus) *conditions.Cause {
	if c := r.masterKeyCause(); c != nil {
		return &conditions.Cause{Reason: c.Reason, Message: fmt.Sprintf("the results of run %s cannot be verified, so the run is stopped: %s",
			active.Name, c.Message), Terminal: true}
	}
	if id := masterkey.MasterKeyID(r.MasterKey); active.KeyID != "" && active.KeyID != id {
		return &conditions.Cause{Reason: masterkey.ReasonMasterKeyChanged, Message: fmt.Sprintf("run %s was started under master key ID %s, but the manager's "+
			"master key is now ID %s (the key was replaced while the run ran), so the run's results cannot be verified and the run is "+
			"stopped; later runs use the new key", active.Name, active.KeyID, id), Terminal: true}
	}
	return nil
}
