package controllers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
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
// A pod that is confirmed gone gives a report with the cause; an error means the log may still be
// read later (an API or kubelet error) and nothing is concluded.
func (r *SuiteReconciler) readReport(ctx context.Context, suite *vmbenchv1.BenchmarkSuite, src platform.LogSource, token []byte) (runReport, error) {
	pods := &corev1.PodList{}
	if err := r.APIReader.List(ctx, pods, client.InNamespace(suite.Namespace), client.MatchingLabels(src.Selector)); err != nil {
		return runReport{}, fmt.Errorf("listing the runner's pod: %w", err)
	}
	if len(pods.Items) == 0 {
		return runReport{LogErr: fmt.Errorf("no pod with labels %s exists, so the runner's log is gone", src.Selector)}, nil
	}
	// The newest pod is the one that ran last, should a launcher ever have been recreated.
	sort.Slice(pods.Items, func(i, j int) bool {
		return pods.Items[j].CreationTimestamp.Before(&pods.Items[i].CreationTimestamp)
	})
	pod := pods.Items[0]
	ctx, cancel := context.WithTimeout(ctx, logReadTimeout)
	defer cancel()
	stream, err := r.Logs.Open(ctx, pod.Namespace, pod.Name, src.Container)
	if err != nil {
		return runReport{}, fmt.Errorf("pod %s container %s: %w", pod.Name, src.Container, err)
	}
	defer func() { _ = stream.Close() }()
	// The log is decoded as it streams in; a stream that breaks off is read again, not judged.
	in := &readErrors{r: stream}
	report := decodeReport(in, token)
	if in.err != nil {
		return runReport{}, fmt.Errorf("pod %s container %s: reading the log: %w", pod.Name, src.Container, in.err)
	}
	return report, nil
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

// decodeReport turns a log into the runner's messages. Frames that fail authentication or arrive
// incomplete are reported, and the good ones are still used.
func decodeReport(log io.Reader, token []byte) runReport {
	decoded, frameErr := frame.Scan(log, token)
	msgs := make([]runplan.Message, 0, len(decoded))
	var errs []error
	if frameErr != nil {
		errs = append(errs, frameErr)
	}
	for _, d := range decoded {
		var m runplan.Message
		if err := json.Unmarshal(d.Payload, &m); err != nil {
			errs = append(errs, fmt.Errorf("frame %s: not a runner message: %w", d.ID, err))
			continue
		}
		msgs = append(msgs, m)
	}
	return newRunReport(msgs, errors.Join(errs...))
}

// rawBudget bounds the raw outputs kept per run, well under a ConfigMap's 1 MiB.
const rawBudget = 512 << 10

// rawOutputs keeps the end of every tool output of a run, for people to read, in a ConfigMap the
// suite owns. It carries no run label, so the run's cleanup leaves it; it goes with the suite.
func rawOutputs(suite *vmbenchv1.BenchmarkSuite, run string, report runReport) *corev1.ConfigMap {
	data := map[string]string{}
	total := 0
	for _, m := range latestResults(report.Results) {
		if m.RawTail == "" || total+len(m.RawTail) > rawBudget {
			continue
		}
		key := rawKey(m.Benchmark, where(m))
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
			Labels: map[string]string{vmbenchv1.LabelSuite: suite.Name, labelRawOf: run},
		},
		Data: data,
	}
}

// labelRawOf names the run whose raw outputs a ConfigMap holds.
const labelRawOf = "vmbench.io/raw-outputs-of"

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
