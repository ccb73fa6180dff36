package suite

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	kubevirtv1 "kubevirt.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/controllers/scheme"
	"github.com/vmbench/vmbench/controllers/suite/failure"
	"github.com/vmbench/vmbench/controllers/suite/summary"
	"github.com/vmbench/vmbench/internal/frame"
	"github.com/vmbench/vmbench/internal/platform"
	"github.com/vmbench/vmbench/internal/runner"
	"github.com/vmbench/vmbench/internal/runplan"
)

var testMasterKey = platform.MasterKey(bytes.Repeat([]byte("m"), platform.MasterKeySize))

// keyedSuite is the test suite as the API server has it, with a UID: run names demo-container-1,
// demo-vm-1, demo-vm-2, ...
func keyedSuite() *vmbenchv1.BenchmarkSuite {
	s := testSuite(vmbenchv1.Benchmark{Name: "cpu", Type: vmbenchv1.BenchmarkSysbenchCPU}, vmbenchv1.Benchmark{Name: "ping", Type: vmbenchv1.BenchmarkPing})
	s.UID = "5b1f0c1e-0000-4000-8000-000000000001"
	return s
}

func mustFrameKeys(t *testing.T, suite *vmbenchv1.BenchmarkSuite, run string) frameKeys {
	t.Helper()
	r := &SuiteReconciler{MasterKey: testMasterKey}
	keys, err := r.frameKeysOf(suite, run)
	if err != nil {
		t.Fatalf("frameKeysOf(%s): %v", run, err)
	}
	return keys
}

// runnerOutput is a run's log as its runner writes it: noise, and every message framed under the
// run's token with IDs <run>-<session>-<sequence>.
func runnerOutput(t *testing.T, token []byte, msgs ...runplan.Message) []byte {
	t.Helper()
	var buf bytes.Buffer
	buf.WriteString("mpirun: noise before the runner\n")
	emit := runner.FrameEmitter(&buf, token, 1, "lmn0p")
	for _, m := range msgs {
		if err := emit(m); err != nil {
			t.Fatal(err)
		}
	}
	return buf.Bytes()
}

// runOf is a whole 2-node run of cpu and ping as its runner reports it.
func runOf(run string) []runplan.Message {
	msgs := []runplan.Message{{Kind: runplan.KindStarted, Run: run}}
	for _, m := range goodResults() {
		m.Run = run
		msgs = append(msgs, m)
	}
	return append(msgs, runplan.Message{Kind: runplan.KindDone, Run: run})
}

// Run 1's authentic frames, replayed into run 2's log, are refused: run 2 fails with the cause, and
// not one of their samples reaches the status.
func TestFramesOfAnotherRunAreRefused(t *testing.T) {
	suite := keyedSuite()
	keys1, keys2 := mustFrameKeys(t, suite, "demo-vm-1"), mustFrameKeys(t, suite, "demo-vm-2")
	log1 := runnerOutput(t, keys1.tokens["demo-vm-1"], runOf("demo-vm-1")...)

	// In its own log, run 1's report is whole.
	own := decodeReport(bytes.NewReader(log1), keys1)
	if own.FrameErr != nil || own.ForeignErr != nil || own.Started == nil || own.Done == nil || len(own.Results) != 3 {
		t.Fatalf("run 1's own log: %+v", own)
	}

	replayed := decodeReport(bytes.NewReader(log1), keys2)
	if replayed.Started != nil || replayed.Done != nil || len(replayed.Results) != 0 {
		t.Errorf("run 2 took run 1's messages: %+v", replayed)
	}
	if replayed.FrameErr != nil {
		t.Errorf("run 1's frames are authentic, not corrupt: %v", replayed.FrameErr)
	}
	if replayed.ForeignErr == nil || !strings.Contains(replayed.ForeignErr.Error(), "5 of run demo-vm-1") {
		t.Errorf("ForeignErr = %v, want it to count run 1's 5 messages", replayed.ForeignErr)
	}

	st := &vmbenchv1.BenchmarkSuiteStatus{}
	run2 := &vmbenchv1.RunStatus{Name: "demo-vm-2", Platform: "vm", Repetition: 2, StartTime: &metav1.Time{Time: finishStart}}
	summary.FinishRun(st, run2, vmbenchv1.PlatformVM, finishBenchmarks(), summary.RunCompletion{
		Report: replayed, Outcome: platform.Outcome{Phase: platform.PhaseSucceeded}, Now: finishNow,
	})
	if run2.Phase != vmbenchv1.RunFailed || !strings.HasPrefix(run2.Message, "frames of another run: the log of run demo-vm-2 holds authentic messages of other runs (5 of run demo-vm-1)") {
		t.Errorf("run 2: %s %q, want Failed with frames of another run", run2.Phase, run2.Message)
	}
	for _, r := range st.Results {
		for _, m := range r.Metrics {
			if m.N != 0 || len(m.Samples) != 0 {
				t.Errorf("%s/%s holds %d samples from run 1", r.Benchmark, m.Name, m.N)
			}
		}
	}
}

// Messages that verify under the run's own token but name another run are refused too, as is a
// mixed log's foreign part, while the run's own messages are kept.
func TestMessagesNamingAnotherRunAreRefused(t *testing.T) {
	suite := keyedSuite()
	keys := mustFrameKeys(t, suite, "demo-vm-2")
	var log bytes.Buffer
	log.Write(runnerOutput(t, keys.tokens["demo-vm-2"], runOf("demo-vm-2")...))
	// A runner holding run 2's token that claims to be run 1, under IDs that name no run.
	for i, m := range runOf("demo-vm-1")[:2] {
		payload, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		if err := frame.Write(&log, keys.tokens["demo-vm-2"], "x"+string(rune('a'+i)), payload, 1); err != nil {
			t.Fatal(err)
		}
	}
	// And a message without a run.
	if err := frame.Write(&log, keys.tokens["demo-vm-2"], "norun", []byte(`{"kind":"done"}`), 1); err != nil {
		t.Fatal(err)
	}
	got := decodeReport(bytes.NewReader(log.Bytes()), keys)
	if got.Started == nil || got.Done == nil || len(got.Results) != 3 {
		t.Errorf("run 2's own messages are not all kept: %+v", got)
	}
	for _, m := range append(got.Results, *got.Started, *got.Done) {
		if m.Run != "demo-vm-2" {
			t.Errorf("kept a message of run %q", m.Run)
		}
	}
	want := "the log of run demo-vm-2 holds authentic messages of other runs (1 of run with no run name, 2 of run demo-vm-1)"
	if got.ForeignErr == nil || !strings.HasPrefix(got.ForeignErr.Error(), want) {
		t.Errorf("ForeignErr = %v, want %q", got.ForeignErr, want)
	}
}

func TestFrameKeysRunOf(t *testing.T) {
	keys := mustFrameKeys(t, keyedSuite(), "demo-vm-1")
	for id, want := range map[string]string{
		"demo-vm-1-lmn0p-1":        "demo-vm-1",
		"demo-container-2-abc-17":  "demo-container-2",
		"demo-vm-3-abc-1":          "demo-vm-3",
		"demo-vm-9-abc-1":          "demo-vm-1", // no such run: the run being read
		"other-suite-vm-1-abc-1":   "demo-vm-1",
		"demo-vm-1-0":              "demo-vm-1",
		"nohyphen":                 "demo-vm-1",
		"demo-container-1-x-y-z-1": "demo-vm-1",
	} {
		if got := keys.runOf(id); got != want {
			t.Errorf("runOf(%q) = %q, want %q", id, got, want)
		}
	}
	if len(keys.tokens) != 6 {
		t.Errorf("%d tokens, want one per run of the suite (6)", len(keys.tokens))
	}
	if _, err := (&SuiteReconciler{MasterKey: testMasterKey}).frameKeysOf(keyedSuite(), "demo-vm-7"); err == nil {
		t.Error("frameKeysOf a run that is not the suite's: no error")
	}
}

func TestRunAuthSecret(t *testing.T) {
	suite := keyedSuite()
	r := &SuiteReconciler{MasterKey: testMasterKey}
	planned := plannedByName(suite, "demo-vm-1")
	run, err := r.platformRun(suite, planned, DefaultedBenchmarks(suite))
	if err != nil {
		t.Fatal(err)
	}
	run.SecretsOwner = "owner-uid"
	run.AuthSecret = runAuthSecretName(run)
	got := runAuthSecret(run)
	if !strings.HasPrefix(got.Name, "demo-vm-1-auth-") || got.Namespace != "bench" || run.AuthSecret != got.Name {
		t.Errorf("Secret %s/%s, run.AuthSecret %s", got.Namespace, got.Name, run.AuthSecret)
	}
	wantLabels := map[string]string{vmbenchv1.LabelSuite: "demo", vmbenchv1.LabelRun: "demo-vm-1", vmbenchv1.LabelPlatform: "vm"}
	if diff := cmp.Diff(wantLabels, got.Labels); diff != "" {
		t.Errorf("labels (-want +got):\n%s", diff)
	}
	want, err := testMasterKey.RunAuth(suite.UID, "demo-vm-1", true)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want.Data(), got.Data); diff != "" {
		t.Errorf("data (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, run.Auth); diff != "" {
		t.Errorf("the VMs get other keys than the Secret holds (-want +got):\n%s", diff)
	}
	container, err := r.platformRun(suite, plannedByName(suite, "demo-container-1"), DefaultedBenchmarks(suite))
	if err != nil {
		t.Fatal(err)
	}
	// A container run's pods get their client keys from the MPI Operator: the Secret holds the token
	// and the host key with its known_hosts, and no client key.
	data := runAuthSecret(container).Data
	if diff := cmp.Diff([]string{platform.AuthKnownHosts, platform.AuthSSHHostKey, platform.AuthTokenKey}, slices.Sorted(maps.Keys(data))); diff != "" {
		t.Errorf("a container run's Secret keys (-want +got):\n%s", diff)
	}
}

// uidClient is a fake client that gives every object it creates a UID, as the API server does.
func uidClient(objs ...client.Object) client.Client {
	n := 0
	return fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(objs...).WithInterceptorFuncs(interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			n++
			obj.SetUID(types.UID(fmt.Sprintf("uid-%d", n)))
			return c.Create(ctx, obj, opts...)
		},
	}).Build()
}

func TestRunSecretsAreOwnedByARunConfigMap(t *testing.T) {
	ctx := context.Background()
	suite := keyedSuite()
	c := uidClient()
	r := &SuiteReconciler{Client: c, APIReader: c, Scheme: scheme.New(), MasterKey: testMasterKey}
	run, err := r.platformRun(suite, plannedByName(suite, "demo-vm-1"), DefaultedBenchmarks(suite))
	if err != nil {
		t.Fatal(err)
	}
	owner, held, err := r.ensureSecretsOwner(ctx, suite, run)
	if err != nil || held != nil || owner == "" {
		t.Fatalf("ensureSecretsOwner = %q, %v, %v", owner, held, err)
	}
	cm := &corev1.ConfigMap{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "bench", Name: "demo-vm-1-secrets"}, cm); err != nil {
		t.Fatal(err)
	}
	if ref := metav1.GetControllerOf(cm); ref == nil || ref.UID != suite.UID || cm.Labels[vmbenchv1.LabelRun] != "demo-vm-1" {
		t.Errorf("the owner ConfigMap is not the run's child of the suite: controller %v, labels %v", ref, cm.Labels)
	}
	again, held, err := r.ensureSecretsOwner(ctx, suite, run)
	if err != nil || held != nil || again != owner {
		t.Errorf("a second attempt = %q, %v, %v; want the same owner %q", again, held, err, owner)
	}

	run.SecretsOwner = owner
	run.AuthSecret = runAuthSecretName(run)
	objs, err := platform.VMIAdapter{}.Build(run)
	if err != nil {
		t.Fatal(err)
	}
	objs = append([]client.Object{runAuthSecret(run)}, objs...)
	ownSecrets(objs, run)
	secrets, vmis := 0, 0
	for _, obj := range objs {
		if _, ok := obj.(*kubevirtv1.VirtualMachineInstance); ok {
			vmis++
		}
		secret, ok := obj.(*corev1.Secret)
		if !ok {
			if len(obj.GetOwnerReferences()) != 0 {
				t.Errorf("%T %s got the Secrets' owner", obj, obj.GetName())
			}
			continue
		}
		secrets++
		want := []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "demo-vm-1-secrets", UID: owner, Controller: ptr.To(true)}}
		if diff := cmp.Diff(want, secret.OwnerReferences); diff != "" {
			t.Errorf("Secret %s owner (-want +got):\n%s", secret.Name, diff)
		}
		if !strings.HasSuffix(secret.Name, platform.SecretName(run, "")) || secret.Type != corev1.SecretTypeOpaque || secret.Labels[vmbenchv1.LabelSuite] != "demo" {
			t.Errorf("Secret %s: type %s, labels %v; want an Opaque Secret with the suite label, named after its owner", secret.Name, secret.Type, secret.Labels)
		}
		retry := secret.DeepCopy()
		if held, err := r.createSecret(ctx, secret); held != nil || err != nil {
			t.Fatalf("createSecret(%s) = %v, %v", secret.Name, held, err)
		}
		// A second attempt finds the first one's Secret, whose name says it is this run's.
		if held, err := r.createSecret(ctx, retry); held != nil || err != nil {
			t.Errorf("createSecret(%s) again = %v, %v; want success", secret.Name, held, err)
		}
	}
	if secrets != 1+vmis {
		t.Errorf("%d Secrets; want the auth Secret and one cloud-init Secret for each of the %d VMs", secrets, vmis)
	}
	if _, err := r.createSecret(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "orphan", Namespace: "bench"}}); err == nil {
		t.Error("createSecret of a Secret without an owner: no error")
	}
}

func TestSecretNamesFollowTheOwner(t *testing.T) {
	run := platform.Run{Name: "demo-vm-1"}
	if got := runAuthSecretName(run); got != "demo-vm-1-auth" {
		t.Errorf("without an owner: %s", got)
	}
	run.SecretsOwner = "uid-1"
	first := runAuthSecretName(run)
	run.SecretsOwner = "uid-2"
	second := runAuthSecretName(run)
	if first == second || !strings.HasPrefix(first, "demo-vm-1-auth-") || len(first) != len("demo-vm-1-auth-")+10 {
		t.Errorf("names %s and %s; want demo-vm-1-auth-<10 hex of the owner's UID>, one per owner", first, second)
	}
}

func TestSecretsOwnerOfAnotherSuiteHoldsTheRun(t *testing.T) {
	ctx := context.Background()
	suite := keyedSuite()
	taken := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "demo-vm-1-secrets", Namespace: "bench", UID: "cm-old",
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "vmbench.io/v1alpha1", Kind: "BenchmarkSuite", Name: "demo", UID: "old-suite", Controller: ptr.To(true)}}}}
	c := uidClient(taken)
	r := &SuiteReconciler{Client: c, APIReader: c, Scheme: scheme.New(), MasterKey: testMasterKey}
	run, err := r.platformRun(suite, plannedByName(suite, "demo-vm-1"), DefaultedBenchmarks(suite))
	if err != nil {
		t.Fatal(err)
	}
	owner, held, err := r.ensureSecretsOwner(ctx, suite, run)
	if err != nil || owner != "" || held == nil || held.Reason != failure.ReasonChildOfAnotherSuite ||
		!strings.Contains(held.Message, "ConfigMap demo-vm-1-secrets exists and is not this suite's") {
		t.Errorf("ensureSecretsOwner = %q, %v, %v; want the run held, naming the ConfigMap", owner, held, err)
	}
}

func TestStartedWithSuiteKeys(t *testing.T) {
	jobKind := schema.GroupVersionKind{Group: "kubeflow.org", Version: "v2beta1", Kind: "MPIJob"}
	workload := func(annotations map[string]string) client.Object {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(jobKind)
		u.SetAnnotations(annotations)
		return u
	}
	kinds := []schema.GroupVersionKind{jobKind}
	job := workload(map[string]string{"x": "y"})
	objs := []client.Object{&corev1.ConfigMap{}, job}
	markPerRunKeys(objs)
	if startedWithSuiteKeys(objs, kinds) {
		t.Errorf("marked children are taken for an earlier vmbench's: %v", job.GetAnnotations())
	}
	if job.GetAnnotations()["x"] != "y" {
		t.Error("marking dropped an annotation")
	}
	if !startedWithSuiteKeys([]client.Object{workload(nil)}, kinds) {
		t.Error("an unmarked workload is not noticed")
	}
	// Only the workload tells: other children (made elsewhere than by the adapter) do not.
	if startedWithSuiteKeys([]client.Object{&corev1.ConfigMap{}, objs[1]}, kinds) {
		t.Error("an unmarked ConfigMap beside a marked workload is taken for an earlier vmbench's")
	}
	if startedWithSuiteKeys(nil, kinds) {
		t.Error("no children: nothing says an earlier vmbench made them")
	}
}
