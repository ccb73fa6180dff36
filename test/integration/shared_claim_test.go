package integration

import (
	"testing"
	"time"

	mpiv2 "github.com/kubeflow/mpi-operator/pkg/apis/kubeflow/v2beta1"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/internal/results"
	"github.com/vmbench/vmbench/internal/runplan"
)

// finishSharedRun plays the MPI Operator for a run of fio on the Shared target: every node reports
// the fixture's figures, then the MPIJob succeeds.
func (h *harness) finishSharedRun(suite, run string) {
	h.t.Helper()
	h.mpiJob(run)
	fio := fixtureMetrics(h.t, results.Fio, "fio-seqwrite-1m-qd4.json")
	msgs := []runplan.Message{{Kind: runplan.KindStarted, Run: run, Virtualization: "kvm", SharedMount: "nfs4 server:/export"}}
	for _, n := range nodes {
		msgs = append(msgs, runplan.Message{Kind: runplan.KindResult, Run: run, Benchmark: "io", Node: n, Metrics: fio, Seconds: 10})
	}
	msgs = append(msgs, runplan.Message{Kind: runplan.KindDone, Run: run, BenchmarkSeconds: 30})
	h.containerLauncherPod(suite, run, runnerLog(h.t, h.token(suite, run), msgs...))
	h.setMPIJobCondition(run, mpiv2.JobSucceeded, "MPIJobSucceeded", "MPIJob succeeded")
}

// sharedClaim waits for a run's ReadWriteMany claim and checks what it is: the class and size of
// spec.sharedStorage, controlled by the suite, mounted by every pod of the run's MPIJob.
func (h *harness) sharedClaim(suite, run string) *corev1.PersistentVolumeClaim {
	h.t.Helper()
	pvc := &corev1.PersistentVolumeClaim{}
	h.g.Eventually(func() error {
		return k8s.Get(h.ctx, client.ObjectKey{Namespace: h.ns, Name: run + "-shared"}, pvc)
	}, timeout, interval).Should(Succeed(), "run %s has its shared claim", run)
	h.g.Expect(hasOwner(pvc, h.get(suite))).To(BeTrue(), "the claim is controlled by the suite: %v", pvc.OwnerReferences)
	h.g.Expect(pvc.Labels).To(HaveKeyWithValue(vmbenchv1.LabelRun, run))
	h.g.Expect(pvc.Spec.AccessModes).To(Equal([]corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany}))
	h.g.Expect(pvc.Spec.StorageClassName).To(HaveValue(Equal("vmbench-shared")))
	h.g.Expect(pvc.Spec.Resources.Requests.Storage().Cmp(resource.MustParse("4Gi"))).To(BeZero(), "the default size")
	job := h.mpiJob(run)
	for role, spec := range job.Spec.MPIReplicaSpecs {
		h.g.Expect(spec.Template.Spec.Volumes).To(ContainElement(HaveField("VolumeSource.PersistentVolumeClaim.ClaimName", pvc.Name)), "%s mounts the claim", role)
	}
	// What a provisioner does.
	pvc.Status.Phase = corev1.ClaimBound
	h.g.Expect(k8s.Status().Update(h.ctx, pvc)).To(Succeed())
	// Whether or not the API server's StorageObjectInUseProtection admission added its finalizer,
	// the claim outlives its deletion until claimGoes lets it go.
	h.holdDeletion(pvc)
	return pvc
}

// claimGoes waits until the run's cleanup deleted its claim, then plays the PVC protection
// controller, which lets a claim go once no pod uses it, and waits until it is gone.
func (h *harness) claimGoes(pvc *corev1.PersistentVolumeClaim, whileHeld func()) {
	h.t.Helper()
	key := client.ObjectKeyFromObject(pvc)
	h.g.Eventually(func(g Gomega) {
		got := &corev1.PersistentVolumeClaim{}
		err := k8s.Get(h.ctx, key, got)
		if apierrors.IsNotFound(err) {
			return
		}
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(got.DeletionTimestamp).NotTo(BeNil(), "claim %s is deleted with its run's cleanup", pvc.Name)
	}, timeout, interval).Should(Succeed())
	if whileHeld != nil {
		whileHeld()
	}
	h.g.Eventually(func() error {
		got := &corev1.PersistentVolumeClaim{}
		if err := k8s.Get(h.ctx, key, got); err != nil {
			return err
		}
		got.Finalizers = nil
		return k8s.Update(h.ctx, got)
	}, timeout, interval).Should(Or(Succeed(), WithTransform(apierrors.IsNotFound, BeTrue())))
	h.g.Eventually(func() bool {
		return apierrors.IsNotFound(k8s.Get(h.ctx, key, &corev1.PersistentVolumeClaim{}))
	}, timeout, interval).Should(BeTrue(), "claim %s is gone", pvc.Name)
}

// Each Container run with the Shared target has a claim of its own, which the suite controls and
// the run's cleanup deletes; the next run waits until it is gone and makes its own.
func TestSharedClaimIsTheSuitesAndGoesWithItsRun(t *testing.T) {
	h := newHarness(t)
	h.startManager(allKinds())
	suite := containerOnly(h.suite("sc", 2, vmbenchv1.Benchmark{Name: "io", Type: vmbenchv1.BenchmarkFio,
		Fio: &vmbenchv1.FioParams{Target: vmbenchv1.StorageShared}}))
	suite.Spec.SharedStorage = &vmbenchv1.SharedStorage{StorageClassName: "vmbench-shared"}
	h.g.Expect(k8s.Create(h.ctx, suite)).To(Succeed())

	first := h.sharedClaim("sc", "sc-container-1")
	h.finishSharedRun("sc", "sc-container-1")
	h.claimGoes(first, func() {
		h.suiteReconciled("sc")
		h.g.Expect(apierrors.IsNotFound(k8s.Get(h.ctx, client.ObjectKey{Namespace: h.ns, Name: "sc-container-2"}, &mpiv2.MPIJob{}))).To(BeTrue(),
			"run 2 started while run 1's claim was still there")
		h.g.Consistently(func() bool {
			return apierrors.IsNotFound(k8s.Get(h.ctx, client.ObjectKey{Namespace: h.ns, Name: "sc-container-2"}, &mpiv2.MPIJob{}))
		}, 2*time.Second, interval).Should(BeTrue(), "run 2 started while run 1's claim was still there")
	})

	second := h.sharedClaim("sc", "sc-container-2")
	h.g.Expect(second.UID).NotTo(Equal(first.UID), "run 2 has a claim of its own")
	h.finishSharedRun("sc", "sc-container-2")
	h.claimGoes(second, nil)

	s := h.eventuallySuite("sc", func(g Gomega, s *vmbenchv1.BenchmarkSuite) {
		g.Expect(s.Status.Phase).To(Equal(vmbenchv1.SuiteComplete))
	})
	h.g.Expect(s.Status.SharedStorage).To(ConsistOf(HaveField("BackedBy", HavePrefix("PVC <run>-shared of storage class vmbench-shared (ReadWriteMany)"))))
	pvcs := &corev1.PersistentVolumeClaimList{}
	h.g.Expect(k8s.List(h.ctx, pvcs, client.InNamespace(h.ns))).To(Succeed())
	h.g.Expect(pvcs.Items).To(BeEmpty(), "no claim is left behind")
}
