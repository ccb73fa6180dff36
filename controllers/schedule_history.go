package controllers

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/internal/history"
)

// HistoryStore keeps the records of a schedule's finished suites after the suites are gone.
type HistoryStore interface {
	// Append adds a record unless one of the same suite UID is there, and returns how many records
	// the schedule's history holds.
	Append(ctx context.Context, schedule *vmbenchv1.BenchmarkSchedule, rec history.Record) (int, error)
	// List returns the schedule's records, oldest first.
	List(ctx context.Context, schedule *vmbenchv1.BenchmarkSchedule) ([]history.Record, error)
}

// Bounds of a schedule's history in etcd.
const (
	// MaxHistoryRecords is how many records a schedule keeps; the oldest go first.
	MaxHistoryRecords = 200
	// MaxHistoryBytes is the most a history ConfigMap's records take, under the API server's 1 MiB
	// per object with room for the metadata; a record that does not fit starts the next ConfigMap.
	MaxHistoryBytes = 900 << 10
)

// historyKey is the data key of a history ConfigMap: one JSON record a line.
const historyKey = "records.jsonl"

// ConfigMapHistory keeps each schedule's records in ConfigMaps <schedule>-history-<n> of its
// namespace, labelled vmbench.io/history-of=<schedule> and owned by the schedule, not by its suites:
// deleting the suites leaves the records, deleting the schedule takes them. Records are appended
// and never rewritten; past MaxHistoryRecords the oldest are dropped, and a ConfigMap left empty is
// deleted.
type ConfigMapHistory struct {
	// Client writes the ConfigMaps; Reader reads them around the cache, which holds ConfigMaps as
	// metadata only.
	Client client.Client
	Reader client.Reader
	Scheme *runtime.Scheme
	// MaxRecords and MaxBytes override the bounds above in tests; 0 keeps them.
	MaxRecords, MaxBytes int
}

var _ HistoryStore = &ConfigMapHistory{}

// historyChunk is one history ConfigMap and its records.
type historyChunk struct {
	cm      *corev1.ConfigMap
	index   int
	records []history.Record
	lines   []string
}

func (h *ConfigMapHistory) bounds() (records, size int) {
	records, size = MaxHistoryRecords, MaxHistoryBytes
	if h.MaxRecords > 0 {
		records = h.MaxRecords
	}
	if h.MaxBytes > 0 {
		size = h.MaxBytes
	}
	return records, size
}

// chunks reads the schedule's history ConfigMaps, in order. Only ConfigMaps the schedule controls,
// by UID, count: anyone may put the label on a ConfigMap.
func (h *ConfigMapHistory) chunks(ctx context.Context, schedule *vmbenchv1.BenchmarkSchedule) ([]*historyChunk, error) {
	var list corev1.ConfigMapList
	if err := h.Reader.List(ctx, &list, client.InNamespace(schedule.Namespace),
		client.MatchingLabels{vmbenchv1.LabelHistoryOf: schedule.Name}); err != nil {
		return nil, fmt.Errorf("listing the history ConfigMaps of schedule %s: %w", schedule.Name, err)
	}
	var out []*historyChunk
	prefix := schedule.Name + "-history-"
	for i := range list.Items {
		cm := &list.Items[i]
		ref := metav1.GetControllerOf(cm)
		if ref == nil || ref.UID != schedule.UID || !strings.HasPrefix(cm.Name, prefix) {
			continue
		}
		n, err := strconv.Atoi(strings.TrimPrefix(cm.Name, prefix))
		if err != nil {
			continue
		}
		c := &historyChunk{cm: cm, index: n}
		sc := bufio.NewScanner(strings.NewReader(cm.Data[historyKey]))
		sc.Buffer(make([]byte, 0, 64<<10), MaxHistoryBytes+1)
		for sc.Scan() {
			line := sc.Text()
			if line == "" {
				continue
			}
			var rec history.Record
			if err := json.Unmarshal([]byte(line), &rec); err != nil {
				return nil, fmt.Errorf("ConfigMap %s holds a line that is not a record (%w): delete the line or the ConfigMap", cm.Name, err)
			}
			c.records, c.lines = append(c.records, rec), append(c.lines, line)
		}
		if err := sc.Err(); err != nil {
			return nil, fmt.Errorf("reading ConfigMap %s: %w", cm.Name, err)
		}
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].index < out[j].index })
	return out, nil
}

// List returns the schedule's records, oldest first.
func (h *ConfigMapHistory) List(ctx context.Context, schedule *vmbenchv1.BenchmarkSchedule) ([]history.Record, error) {
	chunks, err := h.chunks(ctx, schedule)
	if err != nil {
		return nil, err
	}
	var out []history.Record
	for _, c := range chunks {
		out = append(out, c.records...)
	}
	return out, nil
}

// Append adds rec at the end of the last ConfigMap, or of a new one when it would not fit, then drops
// the oldest records beyond the bound.
func (h *ConfigMapHistory) Append(ctx context.Context, schedule *vmbenchv1.BenchmarkSchedule, rec history.Record) (int, error) {
	maxRecords, maxBytes := h.bounds()
	chunks, err := h.chunks(ctx, schedule)
	if err != nil {
		return 0, err
	}
	total := 0
	for _, c := range chunks {
		for _, r := range c.records {
			if r.UID == rec.UID {
				return countRecords(chunks), nil
			}
		}
		total += len(c.records)
	}
	b, err := json.Marshal(rec)
	if err != nil {
		return 0, fmt.Errorf("encoding the record of suite %s: %w", rec.Suite, err)
	}
	line := string(b)
	if len(line)+1 > maxBytes {
		return 0, fmt.Errorf("the record of suite %s takes %d bytes, more than a history ConfigMap holds (%d): "+
			"fewer benchmarks or platforms per suite make it smaller", rec.Suite, len(line)+1, maxBytes)
	}
	var last *historyChunk
	if len(chunks) > 0 {
		last = chunks[len(chunks)-1]
	}
	if last == nil || len(last.cm.Data[historyKey])+len(line)+1 > maxBytes {
		next := 0
		if last != nil {
			next = last.index + 1
		}
		last, err = h.create(ctx, schedule, next, line)
		if err != nil {
			return 0, err
		}
		last.records = []history.Record{rec}
		chunks = append(chunks, last)
	} else {
		last.lines = append(last.lines, line)
		last.records = append(last.records, rec)
		if err := h.write(ctx, last); err != nil {
			return 0, err
		}
	}
	total++
	// The oldest records beyond the bound go, from the first ConfigMaps on.
	for _, c := range chunks {
		if total <= maxRecords {
			break
		}
		drop := min(total-maxRecords, len(c.records))
		c.records, c.lines = c.records[drop:], c.lines[drop:]
		total -= drop
		if len(c.records) == 0 {
			if err := h.Client.Delete(ctx, c.cm, client.Preconditions{UID: &c.cm.UID}); client.IgnoreNotFound(err) != nil {
				return 0, fmt.Errorf("deleting the emptied history ConfigMap %s: %w", c.cm.Name, err)
			}
			continue
		}
		if err := h.write(ctx, c); err != nil {
			return 0, err
		}
	}
	return total, nil
}

func countRecords(chunks []*historyChunk) int {
	n := 0
	for _, c := range chunks {
		n += len(c.records)
	}
	return n
}

func joinLines(lines []string) string {
	var buf bytes.Buffer
	for _, l := range lines {
		buf.WriteString(l)
		buf.WriteByte('\n')
	}
	return buf.String()
}

// write replaces a ConfigMap's records, failing on a conflict with another writer.
func (h *ConfigMapHistory) write(ctx context.Context, c *historyChunk) error {
	orig := c.cm.DeepCopy()
	if c.cm.Data == nil {
		c.cm.Data = map[string]string{}
	}
	c.cm.Data[historyKey] = joinLines(c.lines)
	if err := h.Client.Patch(ctx, c.cm, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("writing the history ConfigMap %s: %w", c.cm.Name, err)
	}
	return nil
}

// create makes the history ConfigMap of index n holding one record line.
func (h *ConfigMapHistory) create(ctx context.Context, schedule *vmbenchv1.BenchmarkSchedule, n int, line string) (*historyChunk, error) {
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{
			Name:      fmt.Sprintf("%s-history-%d", schedule.Name, n),
			Namespace: schedule.Namespace,
			Labels: map[string]string{
				vmbenchv1.LabelHistoryOf: schedule.Name,
				// The manager's admission policy admits only its objects labelled with a suite;
				// history belongs to no one suite.
				vmbenchv1.LabelSuite: "",
			},
		},
		Data: map[string]string{historyKey: line + "\n"},
	}
	if err := controllerutil.SetControllerReference(schedule, cm, h.Scheme); err != nil {
		return nil, err
	}
	if err := h.Client.Create(ctx, cm); err != nil {
		return nil, fmt.Errorf("creating the history ConfigMap %s: %w", cm.Name, err)
	}
	return &historyChunk{cm: cm, index: n, lines: []string{line}}, nil
}
