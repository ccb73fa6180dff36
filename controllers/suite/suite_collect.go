package suite

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/controllers/cachepolicy"
	"github.com/vmbench/vmbench/controllers/suite/summary"
	"github.com/vmbench/vmbench/internal/frame"
	"github.com/vmbench/vmbench/internal/platform"
	"github.com/vmbench/vmbench/internal/runplan"
)

// maxLogBytes bounds how much of a runner's log is read. Frames are small; the rest is noise.
const maxLogBytes = 32 << 20

// LogReader opens a container's log as a stream. The manager reads through the pods/log API; tests
// fake it.
type LogReader interface {
	Open(ctx context.Context, namespace, pod, container string) (io.ReadCloser, error)
}

// PodLogReader reads logs through the pods/log API: no ssh, no route into pods or VMs.
type PodLogReader struct {
	Clientset kubernetes.Interface
}

// Open implements LogReader.
func (p PodLogReader) Open(ctx context.Context, namespace, pod, container string) (io.ReadCloser, error) {
	return p.Clientset.CoreV1().Pods(namespace).GetLogs(pod, &corev1.PodLogOptions{
		Container: container, LimitBytes: ptrInt64(maxLogBytes),
	}).Stream(ctx)
}

func ptrInt64(v int64) *int64 { return &v }

// logReadTimeout bounds one read of a runner's log: a kubelet that accepts the stream and then
// stalls must not hold the reconcile.
const logReadTimeout = 2 * time.Minute

// readReport finds the run's log pod, reads its log and decodes the runner's authenticated frames.
// A VM run's log pods are the master VMI's launcher pods, the first and those of its migrations
// (moves, as the run recorded them, and the VMI's current migration state): readLauncherPods.
// A pod that is confirmed gone, or that cannot be tied to the run's children, gives a report with
// the cause; an error means the log may still be read later (an API or kubelet error) and nothing is
// concluded. ownEnd says that the run's platform ended it on its own (its MPIJob succeeded or
// failed), so that the runner's container terminates: until it has, a log without the runner's Done
// frame may still grow, and is read again later rather than judged (unsettledLog).
func (r *SuiteReconciler) readReport(ctx context.Context, suite *vmbenchv1.BenchmarkSuite, src platform.LogSource,
	children []client.Object, moves []podMove, keys frameKeys, ownEnd bool) (summary.RunReport, error) {
	// The pods are listed while the controller they must have is read: one round trip, not two, in
	// the reconcile that ends a run (docs/performance.md, "Fourth pass"); the answers are taken in
	// the order of the reads one after the other.
	listed := startRead(func() (*corev1.PodList, error) {
		pods := &corev1.PodList{}
		return pods, r.APIReader.List(ctx, pods, client.InNamespace(suite.Namespace), client.MatchingLabels(src.Selector))
	})
	want, gone, err := r.logPodController(ctx, suite.Namespace, src, children)
	pods, listErr := listed.answer()
	if err != nil {
		return summary.RunReport{}, err
	}
	if gone != nil {
		return summary.RunReport{LogErr: gone}, nil
	}
	if listErr != nil {
		return summary.RunReport{}, fmt.Errorf("listing the runner's pod: %w", listErr)
	}
	if len(pods.Items) == 0 {
		return summary.RunReport{LogErr: fmt.Errorf("no pod with labels %s exists, so the runner's log is gone", src.Selector)}, nil
	}
	own, lookalikes, refused := pickLogPods(pods.Items, want)
	if len(lookalikes) > 0 {
		log.FromContext(ctx).Info("pods with a run's labels but another controller are not read", "run", keys.run, "pods", lookalikes, "controller", want.String())
	}
	if refused != nil {
		return summary.RunReport{LogErr: refused}, nil
	}
	if vmi := masterVMI(src, children); vmi != nil {
		// A live migration moves a VMI to a new launcher pod: its frames are read across them all.
		report, skipped, err := r.readLauncherPods(ctx, vmi, own, moves, src.Container, keys, ownEnd)
		if len(skipped) > 0 {
			log.FromContext(ctx).Info("pods that claim the run's VMI as their controller but that KubeVirt never named as its launcher are not read",
				"run", keys.run, "pods", skipped, "vmi", vmi.Name)
		}
		return report, err
	}
	// The oldest controlled pod is the launcher's. Should another claim the same controller (a forged
	// reference, made in a race with the launcher), the next one is read when the first holds no
	// finished runner's report, so that a forgery cannot fail the run. Without a finished report, the
	// oldest pod's word stands: its report, or its read error.
	var first *summary.RunReport
	var readErr error
	for _, pod := range own[:min(len(own), maxLogPods)] {
		report, err := r.readPodReport(ctx, pod, src.Container, keys)
		if err == nil && report.Done == nil && ownEnd {
			// The pod's status was read before its log: a container terminated then had written all.
			err = unsettledLog(pod, src.Container)
		}
		switch {
		case err == nil && report.Done != nil:
			return report, nil
		case first != nil || readErr != nil:
		case err != nil:
			readErr = err
		default:
			first = &report
		}
	}
	if first == nil {
		return summary.RunReport{}, readErr
	}
	return *first, nil
}

// unsettledLog says why a pod's log is not judged yet: the runner's container has not terminated,
// as far as the pod's status says, though the run ended. A pod that ended, or whose status names no
// such container (the log API then refuses the read anyway), is judged by its log.
func unsettledLog(pod *corev1.Pod, container string) error {
	if pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		return nil
	}
	for _, cs := range pod.Status.ContainerStatuses {
		if cs.Name != container || cs.State.Terminated != nil {
			continue
		}
		state := "waiting"
		if cs.State.Running != nil {
			state = "running"
		}
		return fmt.Errorf("pod %s container %s is still %s though the run ended, and its log holds no runner's Done frame yet: "+
			"the log is read again once the container has terminated, not judged while it may still grow", pod.Name, container, state)
	}
	return nil
}

// maxLogPods bounds the pods whose logs one collection reads, each within logReadTimeout, well
// within a reconcile's timeout.
const maxLogPods = 2

// readPodReport reads one pod's log and decodes the runner's frames in it; an error means that the
// log may be read later.
func (r *SuiteReconciler) readPodReport(ctx context.Context, pod *corev1.Pod, container string, keys frameKeys) (summary.RunReport, error) {
	ctx, cancel := context.WithTimeout(ctx, logReadTimeout)
	defer cancel()
	scan, err := r.scanPodLog(ctx, pod, container, keys)
	if err != nil {
		return summary.RunReport{}, err
	}
	return reportOf(scan.Messages, scan.Err(), keys), nil
}

// scanPodLog reads one pod's log and finds the runner's frames in it, within ctx.
func (r *SuiteReconciler) scanPodLog(ctx context.Context, pod *corev1.Pod, container string, keys frameKeys) (frame.Scanned, error) {
	stream, err := r.Logs.Open(ctx, pod.Namespace, pod.Name, container)
	if err != nil {
		return frame.Scanned{}, fmt.Errorf("pod %s container %s: %w", pod.Name, container, err)
	}
	defer func() { _ = stream.Close() }()
	// The log is decoded as it streams in; a stream that breaks off is read again, not judged.
	in := &readErrors{r: stream}
	scan := frame.ScanAll(in, keys.tokenFor)
	if in.err != nil {
		return frame.Scanned{}, fmt.Errorf("pod %s container %s: reading the log: %w", pod.Name, container, in.err)
	}
	return scan, nil
}

// readErrors remembers the error that broke off a stream, which the frame decoder would only report.
type readErrors struct {
	r   io.Reader
	err error
}

func (e *readErrors) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil && err != io.EOF {
		e.err = err
	}
	return n, err
}

// frameKeys are the tokens a run's log is checked under. A frame's ID starts with the name of the
// run whose runner wrote it ("<run>-<session>-<sequence>"); a frame that names another run of the
// suite is checked under that run's token, so that a frame copied from another run's log is told
// as such, and refused, rather than taken for a forgery.
type frameKeys struct {
	// run is the run whose log is read.
	run string
	// tokens are the frame tokens of every run of the suite, by run name.
	tokens map[string][]byte
}

// runOf is the run whose token checks the frame with this ID: the run it names, if that is one of
// the suite's, else the run being read.
func (k frameKeys) runOf(id string) string {
	named := id
	for range 2 {
		if i := strings.LastIndexByte(named, '-'); i >= 0 {
			named = named[:i]
		}
	}
	if _, ok := k.tokens[named]; ok {
		return named
	}
	return k.run
}

func (k frameKeys) tokenFor(id string) []byte { return k.tokens[k.runOf(id)] }

// decodeReport turns a log into the runner's messages. Frames that fail authentication or arrive
// incomplete are reported, and the good ones are still used. Authentic frames of another run (a
// frame checked under another run's token, or whose message names another run) are reported and
// never used.
func decodeReport(log io.Reader, keys frameKeys) summary.RunReport {
	decoded, frameErr := frame.ScanKeys(log, keys.tokenFor)
	return reportOf(decoded, frameErr, keys)
}

// reportOf turns decoded frames into the runner's messages, as decodeReport does.
func reportOf(decoded []frame.Decoded, frameErr error, keys frameKeys) summary.RunReport {
	msgs := make([]runplan.Message, 0, len(decoded))
	var errs []error
	if frameErr != nil {
		errs = append(errs, frameErr)
	}
	foreign := map[string]int{}
	for _, d := range decoded {
		var m runplan.Message
		if err := json.Unmarshal(d.Payload, &m); err != nil {
			errs = append(errs, fmt.Errorf("frame %s: not a runner message: %w", d.ID, err))
			continue
		}
		if signer := keys.runOf(d.ID); signer != keys.run {
			foreign[signer]++
			continue
		}
		if m.Run != keys.run {
			foreign[m.Run]++
			continue
		}
		msgs = append(msgs, m)
	}
	report := newRunReport(msgs, errors.Join(errs...))
	report.ForeignErr = foreignFrames(keys.run, foreign)
	return report
}

// foreignFrames says which other runs' messages a run's log held.
func foreignFrames(run string, counts map[string]int) error {
	if len(counts) == 0 {
		return nil
	}
	parts := make([]string, 0, len(counts))
	for _, other := range slices.Sorted(maps.Keys(counts)) {
		name := other
		if name == "" {
			name = "with no run name"
		}
		parts = append(parts, fmt.Sprintf("%d of run %s", counts[other], name))
	}
	return fmt.Errorf("the log of run %s holds authentic messages of other runs (%s); they were refused, "+
		"as a run's results come from its own runner only", run, strings.Join(parts, ", "))
}

// rawBudget bounds the raw outputs kept per run, well under a ConfigMap's 1 MiB.
const rawBudget = 512 << 10

// rawOutputs keeps the end of every tool output of a run, for people to read, in a ConfigMap the
// suite owns. It carries no run label, so the run's cleanup leaves it; it goes with the suite.
func rawOutputs(suite *vmbenchv1.BenchmarkSuite, run string, report summary.RunReport) *corev1.ConfigMap {
	data := map[string]string{}
	total := 0
	for _, m := range summary.LatestResults(report.Results) {
		if m.RawTail == "" || total+len(m.RawTail) > rawBudget {
			continue
		}
		key := rawKey(m.Benchmark, summary.Where(m))
		data[key] = m.RawTail
		total += len(m.RawTail)
	}
	if len(data) == 0 {
		return nil
	}
	return &corev1.ConfigMap{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{
			Name: run + "-raw", Namespace: suite.Namespace,
			Labels: map[string]string{vmbenchv1.LabelSuite: suite.Name, cachepolicy.LabelRawOf: run},
		},
		Data: data,
	}
}

// rawKey is a ConfigMap key for one execution: only [-._a-zA-Z0-9] are allowed.
func rawKey(benchmark, node string) string {
	key := []byte(benchmark + "." + node + ".txt")
	for i, c := range key {
		if c != '-' && c != '.' && c != '_' && (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') && (c < '0' || c > '9') {
			key[i] = '_'
		}
	}
	return string(key)
}

// newRunReport sorts decoded messages by kind; later duplicates of started and done are ignored.
func newRunReport(msgs []runplan.Message, frameErr error) summary.RunReport {
	r := summary.RunReport{FrameErr: frameErr}
	for i := range msgs {
		m := msgs[i]
		switch m.Kind {
		case runplan.KindStarted:
			if r.Started == nil {
				r.Started = &m
			}
		case runplan.KindResult:
			r.Results = append(r.Results, m)
		case runplan.KindProbeStarted:
			if r.ProbeStarted == nil {
				r.ProbeStarted = &m
			}
		case runplan.KindDone:
			if r.Done == nil {
				r.Done = &m
			}
		}
	}
	return r
}
