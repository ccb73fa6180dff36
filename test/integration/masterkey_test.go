package integration

import (
	"errors"
	"testing"

	mpiv2 "github.com/kubeflow/mpi-operator/pkg/apis/kubeflow/v2beta1"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/controllers/masterkey"
	suitecontroller "github.com/vmbench/vmbench/controllers/suite"
	"github.com/vmbench/vmbench/internal/platform"
)

// keyRef is where the master key is in these tests: the test's namespace stands for the manager's.
func (h *harness) keyRef() types.NamespacedName {
	return types.NamespacedName{Namespace: h.ns, Name: "vmbench-master-key"}
}

// loadKey does what the manager does at its start: it loads the master key, and starts without it
// when the key is missing, replaced or unusable. The next startManager uses what it loaded.
func (h *harness) loadKey() (platform.MasterKey, *masterkey.MasterKeyFault) {
	h.t.Helper()
	key, err := masterkey.LoadMasterKey(h.ctx, k8s, h.keyRef())
	var fault *masterkey.MasterKeyFault
	if errors.As(err, &fault) {
		err = nil
	}
	h.g.Expect(err).NotTo(HaveOccurred())
	h.configure = func(r *suitecontroller.SuiteReconciler) { r.MasterKey, r.MasterKeyFault = key, fault }
	return key, fault
}

// putMasterKey writes the master key Secret, as a restore from backup does.
func (h *harness) putMasterKey(key platform.MasterKey) {
	h.t.Helper()
	ref := h.keyRef()
	h.g.Expect(k8s.Create(h.ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: ref.Name, Namespace: ref.Namespace},
		Data: map[string][]byte{masterkey.MasterKeyData: key}})).To(Succeed())
}

func (h *harness) deleteMasterKey() {
	h.t.Helper()
	ref := h.keyRef()
	h.g.Expect(k8s.Delete(h.ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: ref.Name, Namespace: ref.Namespace}})).To(Succeed())
}

func (h *harness) noMPIJob(name string) {
	h.t.Helper()
	err := k8s.Get(h.ctx, client.ObjectKey{Namespace: h.ns, Name: name}, &mpiv2.MPIJob{})
	h.g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "%s has no MPIJob: %v", name, err)
}

func runOf(s *vmbenchv1.BenchmarkSuite, name string) vmbenchv1.RunStatus {
	for _, r := range s.Status.Runs {
		if r.Name == name {
			return r
		}
	}
	return vmbenchv1.RunStatus{}
}

// The master key Secret is deleted while a suite runs, and the manager restarts. It mints no new key:
// a suite not admitted yet stays in line with Queued and Progressing saying MasterKeyMissing and what
// to do, and holds no run slot; the running suite's run fails at collection with the cause, and its
// next run fails at once rather than start, so that the suite ends and frees the slot. Once the
// Secret is restored and the manager restarted, the suite in line runs under the same key ID.
func TestDeletedMasterKeyIsNamedAndTheQueueGoesOn(t *testing.T) {
	h := newHarness(t)
	h.putMasterKey(masterKey)
	key, fault := h.loadKey()
	h.g.Expect(fault).To(BeNil())
	id := masterkey.MasterKeyID(key)
	record := &corev1.ConfigMap{}
	h.g.Expect(k8s.Get(h.ctx, masterkey.MasterKeyRecord(h.keyRef()), record)).To(Succeed())
	h.g.Expect(record.Data).To(HaveKeyWithValue(masterkey.MasterKeyIDData, id))

	h.startManager(allKinds())
	h.g.Expect(k8s.Create(h.ctx, containerOnly(h.suite("inflight", 2, bench("cpu", vmbenchv1.BenchmarkSysbenchCPU))))).To(Succeed())
	h.eventuallySuite("inflight", func(g Gomega, s *vmbenchv1.BenchmarkSuite) {
		g.Expect(runOf(s, "inflight-container-1").Phase).To(Equal(vmbenchv1.RunRunning))
		g.Expect(runOf(s, "inflight-container-1").KeyID).To(Equal(id), "the run records the key ID it started under")
	})

	h.stopManager()
	h.deleteMasterKey()
	_, fault = h.loadKey()
	h.g.Expect(fault).NotTo(BeNil())
	h.g.Expect(fault.Reason).To(Equal(masterkey.ReasonMasterKeyMissing))
	err := k8s.Get(h.ctx, h.keyRef(), &corev1.Secret{})
	h.g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "no key is minted: %v", err)
	h.startManager(allKinds())

	h.g.Expect(k8s.Create(h.ctx, h.quickSuite("later"))).To(Succeed())
	recordName := h.ns + "/vmbench-master-key-id"
	later := h.eventuallySuite("later", func(g Gomega, s *vmbenchv1.BenchmarkSuite) {
		g.Expect(queued(s).Status).To(Equal(metav1.ConditionTrue))
		g.Expect(queued(s).Reason).To(Equal(masterkey.ReasonMasterKeyMissing))
	})
	h.g.Expect(queued(later).Message).To(Equal("the suite stays in line until the manager has its master key: the master key Secret " +
		h.ns + "/vmbench-master-key is missing, but ConfigMap " + recordName + " records that a key was in use (key ID " + id +
		", first used at " + record.Data[masterkey.MasterKeyAdoptedData] + "), so the manager made no new key: runs cannot start or be " +
		"collected. Restore the Secret from backup and restart the manager; or, to start over with a new key, delete ConfigMap " +
		recordName + " and restart the manager (runs in flight then fail)"))
	h.g.Expect(progressing(later).Reason).To(Equal(masterkey.ReasonMasterKeyMissing))
	h.g.Expect(progressing(later).Message).To(ContainSubstring("run later-container-1 is waiting: the suite stays in line"))
	h.g.Expect(later.Status.StartTime).To(BeNil(), "a suite held for the key is not admitted: it takes no slot and its clock does not run")
	h.noMPIJob("later-container-1")

	// The run in flight ends: its results cannot be verified, so it fails with the cause, and the
	// suite's next run fails at once rather than start.
	h.setMPIJobCondition("inflight-container-1", mpiv2.JobSucceeded, "MPIJobSucceeded", "MPIJob succeeded")
	inflight := h.eventuallySuite("inflight", func(g Gomega, s *vmbenchv1.BenchmarkSuite) {
		g.Expect(s.Status.Phase).To(Equal(vmbenchv1.SuiteFailed))
	})
	h.g.Expect(runOf(inflight, "inflight-container-1").Message).To(HavePrefix(masterkey.ReasonMasterKeyMissing +
		": the results of run inflight-container-1 cannot be verified, so the run is stopped: the master key Secret " + h.ns + "/vmbench-master-key is missing"))
	second := runOf(inflight, "inflight-container-2")
	h.g.Expect(second.Phase).To(Equal(vmbenchv1.RunFailed))
	h.g.Expect(second.Message).To(HavePrefix(masterkey.ReasonMasterKeyMissing + ": run inflight-container-2 was not started: the master key Secret"))
	h.noMPIJob("inflight-container-2")

	// The slot is free, and the suite in line still waits for the key, not failed and not admitted.
	h.eventuallySuite("later", func(g Gomega, s *vmbenchv1.BenchmarkSuite) {
		g.Expect(s.Status.ObservedGeneration).To(Equal(s.Generation))
		g.Expect(queued(s).Reason).To(Equal(masterkey.ReasonMasterKeyMissing))
		g.Expect(s.Status.StartTime).To(BeNil())
		g.Expect(s.Status.Phase).To(Equal(vmbenchv1.SuitePending))
	})
	h.noMPIJob("later-container-1")

	// Restored from backup: the manager takes the key again, and the suite in line runs.
	h.stopManager()
	h.putMasterKey(masterKey)
	_, fault = h.loadKey()
	h.g.Expect(fault).To(BeNil())
	h.startManager(allKinds())
	h.eventuallySuite("later", func(g Gomega, s *vmbenchv1.BenchmarkSuite) {
		g.Expect(runOf(s, "later-container-1").Phase).To(Equal(vmbenchv1.RunRunning))
		g.Expect(runOf(s, "later-container-1").KeyID).To(Equal(id))
		g.Expect(queued(s).Reason).To(Equal(vmbenchv1.ReasonAdmitted))
	})
	h.finishContainerRun("later", "later-container-1", 1)
	h.eventuallySuite("later", func(g Gomega, s *vmbenchv1.BenchmarkSuite) {
		g.Expect(s.Status.Phase).To(Equal(vmbenchv1.SuiteComplete))
	})
}

// The key is rotated (Secret and record deleted, manager restarted) while a run is in flight: the
// manager mints a new key, and the run, started under the old one, fails at collection naming both
// key IDs instead of failing its frames' checks; the next suite runs under the new key.
func TestRunCollectedUnderARotatedKeyFailsNamingBothKeys(t *testing.T) {
	h := newHarness(t)
	h.putMasterKey(masterKey)
	_, fault := h.loadKey()
	h.g.Expect(fault).To(BeNil())
	oldID := masterkey.MasterKeyID(masterKey)
	h.startManager(allKinds())
	h.g.Expect(k8s.Create(h.ctx, h.quickSuite("rotated"))).To(Succeed())
	h.eventuallySuite("rotated", func(g Gomega, s *vmbenchv1.BenchmarkSuite) {
		g.Expect(runOf(s, "rotated-container-1").Phase).To(Equal(vmbenchv1.RunRunning))
	})

	h.stopManager()
	h.deleteMasterKey()
	h.g.Expect(k8s.Delete(h.ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
		Name: masterkey.MasterKeyRecord(h.keyRef()).Name, Namespace: h.ns}})).To(Succeed())
	var fresh platform.MasterKey
	fresh, fault = h.loadKey()
	h.g.Expect(fault).To(BeNil())
	newID := masterkey.MasterKeyID(fresh)
	h.g.Expect(newID).NotTo(Equal(oldID))
	h.startManager(allKinds())

	// The runner signs with the keys of the old master key, as a run in flight does.
	h.finishContainerRun("rotated", "rotated-container-1", 1)
	s := h.eventuallySuite("rotated", func(g Gomega, s *vmbenchv1.BenchmarkSuite) {
		g.Expect(s.Status.Phase).To(Equal(vmbenchv1.SuiteFailed))
	})
	h.g.Expect(runOf(s, "rotated-container-1").Message).To(HavePrefix(masterkey.ReasonMasterKeyChanged + ": run rotated-container-1 was started " +
		"under master key ID " + oldID + ", but the manager's master key is now ID " + newID + " (the key was replaced while the run ran), " +
		"so the run's results cannot be verified and the run is stopped; later runs use the new key"))

	// The run's pods hold the slot until they are gone (queue_test.go).
	h.collectGarbage("rotated")
	h.g.Expect(k8s.Create(h.ctx, h.quickSuite("next"))).To(Succeed())
	h.eventuallySuite("next", func(g Gomega, s *vmbenchv1.BenchmarkSuite) {
		g.Expect(runOf(s, "next-container-1").Phase).To(Equal(vmbenchv1.RunRunning))
		g.Expect(runOf(s, "next-container-1").KeyID).To(Equal(newID))
	})
}
