package schedule

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/controllers/cachepolicy"
	"github.com/vmbench/vmbench/controllers/conditions"
	"github.com/vmbench/vmbench/internal/history"
	"github.com/vmbench/vmbench/internal/platform"
)

// HistoryStore keeps the records of a schedule's finished suites after the suites are gone.
type HistoryStore interface {
	// Append adds a record unless one of the same suite UID is there, and returns how many records
	// the schedule's history holds.
	Append(ctx context.Context, schedule *vmbenchv1.BenchmarkSchedule, rec history.Record) (int, error)
	// List returns the schedule's records, oldest first.
	List(ctx context.Context, schedule *vmbenchv1.BenchmarkSchedule) ([]history.Record, error)
}

// HistoryAdopter is a HistoryStore that can adopt a history written before records were signed.
type HistoryAdopter interface {
	// Adopt signs and writes back the unsigned lines of the schedule's history that are records,
	// and returns how many it adopted. The caller calls it once per schedule, before any other read
	// of the history, and records that it did (status.historySignedAt).
	Adopt(ctx context.Context, schedule *vmbenchv1.BenchmarkSchedule) (int, error)
}

// Bounds of a schedule's history in etcd and in the manager's memory.
const (
	// MaxHistoryRecords is how many records a schedule keeps; the oldest go first.
	MaxHistoryRecords = 200
	// MaxHistoryBytes is the most a history ConfigMap's records take, under the API server's 1 MiB
	// per object with room for the metadata; a record that does not fit starts the next ConfigMap.
	MaxHistoryBytes = 900 << 10
	// MaxHistoryReadBytes is the most the manager reads of one schedule's history ConfigMaps; a
	// history beyond it is refused, with the ConfigMaps to delete. MaxHistoryKeptBytes is what the
	// manager keeps its own records within (the oldest go first), a ConfigMap under the read bound
	// so that a write half done never crosses it.
	MaxHistoryReadBytes = 16 << 20
	MaxHistoryKeptBytes = MaxHistoryReadBytes - MaxHistoryBytes
	// historyCacheBytes bounds the records kept parsed between reads, over all schedules.
	historyCacheBytes = 32 << 20
	// maxIgnoredNames is how many ignored ConfigMaps a Warning event names; it counts the rest.
	maxIgnoredNames = 10
)

// historyKey is the data key of a history ConfigMap: one JSON record a line.
const historyKey = history.DataKey

// ConfigMapHistory keeps each schedule's records in ConfigMaps <schedule>-history-<n> of its
// namespace, labelled vmbench.io/history-of=<schedule> and owned by the schedule, not by its suites:
// deleting the suites leaves the records, deleting the schedule takes them. Records are appended
// and never rewritten; past MaxHistoryRecords or MaxHistoryKeptBytes the oldest are dropped, and a
// ConfigMap left empty is deleted.
//
// Namespace editors may write these ConfigMaps, so nothing in them is trusted: they are listed as
// metadata first, only <schedule>-history-<n> controlled by the schedule are read, one at a time and
// at most MaxHistoryReadBytes in all, and only lines signed with the schedule's history key (derived
// from the master key) count. What is ignored is named in a Warning event on the schedule, once.
type ConfigMapHistory struct {
	// Client writes the ConfigMaps; Reader reads them around the cache, which holds ConfigMaps as
	// metadata only.
	Client client.Client
	Reader client.Reader
	Scheme *runtime.Scheme
	// Key is the master key, from which each schedule's history key is derived; without a usable
	// key the history is neither read nor written.
	Key platform.MasterKey
	// Recorder tells, on the schedule, what the reader ignored; nil tells nothing.
	Recorder events.EventRecorder
	// MaxRecords, MaxBytes, MaxKeptBytes and MaxReadBytes override the bounds above in tests; 0
	// keeps them.
	MaxRecords, MaxBytes, MaxKeptBytes, MaxReadBytes int

	mu sync.Mutex
	// parsed holds, per schedule UID, the ConfigMaps read, by name, while their resourceVersion
	// stays; used counts the reads, to drop the schedules least recently read first.
	parsed map[types.UID]*parsedHistory
	used   int
	// told is the last ignored-objects note emitted per schedule UID, so that it is told once.
	told map[types.UID]string
}

var (
	_ HistoryStore   = &ConfigMapHistory{}
	_ HistoryAdopter = &ConfigMapHistory{}
)

type parsedHistory struct {
	maps     map[string]*historyChunk
	lastUsed int
}

// historyChunk is one history ConfigMap and its verified records: lines are their signed lines.
// size is the length of the ConfigMap's data as read, bad how many of its lines did not verify,
// adopted how many unsigned lines an adopting read signed.
type historyChunk struct {
	cm      *corev1.ConfigMap
	index   int
	records []history.Record
	lines   []string
	size    int
	bad     map[error]int
	adopted int
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

func (h *ConfigMapHistory) byteBounds() (kept, read int) {
	kept, read = MaxHistoryKeptBytes, MaxHistoryReadBytes
	if h.MaxKeptBytes > 0 {
		kept = h.MaxKeptBytes
	}
	if h.MaxReadBytes > 0 {
		read = h.MaxReadBytes
	}
	return kept, read
}

// historyIndex is n of a ConfigMap named <schedule>-history-<n>, in its canonical form.
func historyIndex(schedule, name string) (int, bool) {
	suffix, ok := strings.CutPrefix(name, schedule+"-history-")
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(suffix)
	if err != nil || n < 0 || strconv.Itoa(n) != suffix {
		return 0, false
	}
	return n, true
}

// chunks reads the schedule's history ConfigMaps, in order. They are listed as metadata; only
// <schedule>-history-<n> that the schedule controls by UID are read, one at a time, each from the
// parsed copy while its resourceVersion stays, and no more than the read bound in all. The others
// carrying the label, and the lines whose signature does not verify, are ignored and told once.
// An adopting read (see Adopt) reads every ConfigMap afresh and signs its unsigned records, and
// leaves the parsed copies alone: only what the manager writes back of it is remembered.
func (h *ConfigMapHistory) chunks(ctx context.Context, schedule *vmbenchv1.BenchmarkSchedule, adopt bool) ([]*historyChunk, error) {
	key, err := h.Key.HistoryKey(schedule.UID)
	if err != nil {
		return nil, fmt.Errorf("the history of schedule %s is neither read nor written without the master key (%w): "+
			"check the manager's --master-key-secret and the manager's log", schedule.Name, err)
	}
	list := cachepolicy.MetadataList(corev1.SchemeGroupVersion.WithKind("ConfigMap"))
	if err := h.Reader.List(ctx, list, client.InNamespace(schedule.Namespace),
		client.MatchingLabels{vmbenchv1.LabelHistoryOf: schedule.Name}); err != nil {
		return nil, fmt.Errorf("listing the history ConfigMaps of schedule %s: %w", schedule.Name, err)
	}
	var ours []*metav1.PartialObjectMetadata
	var ignored []string
	for i := range list.Items {
		m := &list.Items[i]
		_, named := historyIndex(schedule.Name, m.Name)
		if ref := metav1.GetControllerOf(m); ref == nil || ref.UID != schedule.UID || !named {
			ignored = append(ignored, m.Name)
			continue
		}
		ours = append(ours, m)
	}
	sort.Slice(ours, func(i, j int) bool {
		a, _ := historyIndex(schedule.Name, ours[i].Name)
		b, _ := historyIndex(schedule.Name, ours[j].Name)
		return a < b
	})
	_, readBound := h.byteBounds()
	out := make([]*historyChunk, 0, len(ours))
	total := 0
	for _, m := range ours {
		var c *historyChunk
		if !adopt {
			c = h.cached(schedule.UID, m.Name, m.ResourceVersion)
		}
		if c == nil {
			if c, err = h.read(ctx, schedule, m.Name, key, readBound-total, adopt); err != nil {
				return nil, err
			}
			if c == nil {
				// Gone since the list.
				continue
			}
		}
		total += c.size
		if total > readBound {
			return nil, h.tooLarge(schedule, ours, m.Name, readBound)
		}
		out = append(out, c)
	}
	if !adopt {
		h.keep(schedule.UID, out)
	}
	h.tell(schedule, ignored, out)
	return out, nil
}

// read gets one history ConfigMap and verifies its lines; nil when it is gone. A ConfigMap larger
// than room is refused before its lines are parsed. With adopt, an unsigned line that is a record
// is signed and kept as the line the manager writes back; a line with a bad signature never is.
func (h *ConfigMapHistory) read(ctx context.Context, schedule *vmbenchv1.BenchmarkSchedule, name string, key []byte, room int, adopt bool) (*historyChunk, error) {
	cm := &corev1.ConfigMap{}
	if err := h.Reader.Get(ctx, client.ObjectKey{Namespace: schedule.Namespace, Name: name}, cm); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("reading the history ConfigMap %s: %w", name, err)
	}
	if ref := metav1.GetControllerOf(cm); ref == nil || ref.UID != schedule.UID {
		// Replaced since the list: not the schedule's.
		return nil, nil
	}
	n, _ := historyIndex(schedule.Name, name)
	data := cm.Data[historyKey]
	c := &historyChunk{cm: cm, index: n, size: len(data), bad: map[error]int{}}
	if c.size > room {
		return c, nil
	}
	for line := range strings.Lines(data) {
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			continue
		}
		rec, err := history.VerifyLine(key, line)
		if adopt && errors.Is(err, history.ErrUnsigned) {
			if signed, rec, ok := adoptLine(key, line); ok {
				c.records, c.lines = append(c.records, rec), append(c.lines, signed)
				c.adopted++
				continue
			}
		}
		switch {
		case errors.Is(err, history.ErrUnsigned), errors.Is(err, history.ErrBadSignature):
			c.bad[err]++
			continue
		case err != nil:
			// Signed by the manager, yet not a record: the manager wrote no such line.
			c.bad[history.ErrBadSignature]++
			continue
		}
		c.records, c.lines = append(c.records, rec), append(c.lines, line)
	}
	// The data is kept as its verified lines only, which is what the manager writes back.
	cm.Data = nil
	return c, nil
}

// adoptLine signs an unsigned line that is one history record, as a vmbench older than signed
// records wrote it: a JSON object, naming its suite and the suite's UID, and nothing else.
func adoptLine(key []byte, line string) (string, history.Record, bool) {
	var rec history.Record
	dec := json.NewDecoder(strings.NewReader(line))
	if err := dec.Decode(&rec); err != nil || dec.More() || rec.Suite == "" || rec.UID == "" {
		return "", rec, false
	}
	signed, err := history.SignLine(key, rec)
	if err != nil {
		return "", rec, false
	}
	return signed, rec, true
}

// Adopt is the one-time adoption of a history written before records were signed: every unsigned
// line of the schedule's own history ConfigMaps (named <schedule>-history-<n>, controlled by its
// UID) that is a record is signed, and each ConfigMap holding such lines is written back, its lines
// in their order. Lines with a bad signature, and unsigned lines that are no record, are not
// adopted: they are told in the HistoryIgnored event and left out of the write, as any write
// leaves them out. A Normal HistoryAdopted event counts the records adopted.
//
// Trust on first use: the older manager counted these lines already. The caller adopts only while
// the schedule's status.historySignedAt, which only the manager writes, is unset, and sets it once
// adopted, so no later unsigned line is ever adopted.
func (h *ConfigMapHistory) Adopt(ctx context.Context, schedule *vmbenchv1.BenchmarkSchedule) (int, error) {
	chunks, err := h.chunks(ctx, schedule, true)
	if err != nil {
		return 0, err
	}
	adopted := 0
	var names []string
	for _, c := range chunks {
		if c.adopted == 0 {
			continue
		}
		n := c.adopted
		if err := h.write(ctx, schedule, c); err != nil {
			return adopted, fmt.Errorf("adopting the unsigned records of %s: %w", c.cm.Name, err)
		}
		adopted += n
		names = append(names, c.cm.Name)
	}
	if adopted > 0 && h.Recorder != nil {
		h.Recorder.Eventf(schedule, nil, corev1.EventTypeNormal, vmbenchv1.ReasonHistoryAdopted, "AdoptHistory",
			"%s", conditions.Truncate(fmt.Sprintf("signed %d records written before records were signed, in ConfigMaps %s; from now on "+
				"only signed lines count (status.historySignedAt)", adopted, strings.Join(truncateNames(names), ", ")), 1024))
	}
	return adopted, nil
}

// tooLarge is the error of a history beyond the read bound.
func (h *ConfigMapHistory) tooLarge(schedule *vmbenchv1.BenchmarkSchedule, ours []*metav1.PartialObjectMetadata, at string, bound int) error {
	names := make([]string, 0, len(ours))
	for _, m := range ours {
		names = append(names, m.Name)
	}
	return fmt.Errorf("the history ConfigMaps of schedule %s (%s) hold more than the %d MiB the manager reads of a history, "+
		"reached at %s; the manager keeps its own records within %d MiB, so the rest was written by someone else: delete the "+
		"ConfigMaps from the lowest number on (the oldest records), or any that hold lines the manager did not write, until "+
		"the rest fit", schedule.Name, strings.Join(truncateNames(names), ", "), bound>>20, at, MaxHistoryKeptBytes>>20)
}

func truncateNames(names []string) []string {
	if len(names) <= maxIgnoredNames {
		return names
	}
	return append(slices.Clone(names[:maxIgnoredNames]), fmt.Sprintf("and %d more", len(names)-maxIgnoredNames))
}

// tell emits a Warning event naming what the read ignored, when that differs from what was told
// last for the schedule.
func (h *ConfigMapHistory) tell(schedule *vmbenchv1.BenchmarkSchedule, ignored []string, chunks []*historyChunk) {
	var parts []string
	if len(ignored) > 0 {
		slices.Sort(ignored)
		parts = append(parts, fmt.Sprintf("%d ConfigMaps labelled %s=%s are not this schedule's history (only %s-history-<n> "+
			"controlled by the schedule are), so they were not read: %s; remove the label from them or delete them",
			len(ignored), vmbenchv1.LabelHistoryOf, schedule.Name, schedule.Name, strings.Join(truncateNames(ignored), ", ")))
	}
	for _, c := range chunks {
		if n := c.bad[history.ErrUnsigned]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d lines of ConfigMap %s carry no signature and were not adopted (written by someone other "+
				"than the manager after the history was adopted, see status.historySignedAt, or no record), so they count in no finding, baseline or trigger and are dropped at the "+
				"manager's next write there", n, c.cm.Name))
		}
		if n := c.bad[history.ErrBadSignature]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d lines of ConfigMap %s fail the signature check (changed or written by someone other "+
				"than the manager), so they count in no finding, baseline or trigger and are dropped at the manager's next write there",
				n, c.cm.Name))
		}
	}
	note := strings.Join(parts, "; ")
	h.mu.Lock()
	if h.told == nil {
		h.told = map[types.UID]string{}
	}
	same := h.told[schedule.UID] == note
	h.told[schedule.UID] = note
	h.mu.Unlock()
	if same || note == "" || h.Recorder == nil {
		return
	}
	h.Recorder.Eventf(schedule, nil, corev1.EventTypeWarning, vmbenchv1.ReasonHistoryIgnored, "ReadHistory", "%s", conditions.Truncate(note, 1024))
}

// cached is a copy of the parsed ConfigMap name of the schedule, if it was read at that
// resourceVersion.
func (h *ConfigMapHistory) cached(schedule types.UID, name, version string) *historyChunk {
	h.mu.Lock()
	defer h.mu.Unlock()
	p := h.parsed[schedule]
	if p == nil || p.maps[name] == nil || p.maps[name].cm.ResourceVersion != version {
		return nil
	}
	return p.maps[name].clone()
}

// keep remembers the schedule's chunks as read now, in place of what was remembered, and drops the
// schedules read least recently while the parsed records exceed their bound.
func (h *ConfigMapHistory) keep(schedule types.UID, chunks []*historyChunk) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.parsed == nil {
		h.parsed = map[types.UID]*parsedHistory{}
	}
	h.used++
	p := &parsedHistory{maps: map[string]*historyChunk{}, lastUsed: h.used}
	for _, c := range chunks {
		p.maps[c.cm.Name] = c.clone()
	}
	h.parsed[schedule] = p
	for h.parsedBytes() > historyCacheBytes {
		oldest := schedule
		for uid, q := range h.parsed {
			if q.lastUsed < h.parsed[oldest].lastUsed {
				oldest = uid
			}
		}
		delete(h.parsed, oldest)
		if oldest == schedule {
			return
		}
	}
}

// remember replaces one parsed ConfigMap after the manager wrote it; nil forgets it.
func (h *ConfigMapHistory) remember(schedule types.UID, name string, c *historyChunk) {
	h.mu.Lock()
	defer h.mu.Unlock()
	p := h.parsed[schedule]
	if p == nil {
		return
	}
	if c == nil {
		delete(p.maps, name)
		return
	}
	p.maps[name] = c.clone()
}

func (h *ConfigMapHistory) parsedBytes() int {
	n := 0
	for _, p := range h.parsed {
		for _, c := range p.maps {
			n += c.size
		}
	}
	return n
}

// clone copies a chunk so that neither the cache nor its readers change the other's slices.
func (c *historyChunk) clone() *historyChunk {
	out := *c
	out.cm = c.cm.DeepCopy()
	out.records, out.lines = slices.Clone(c.records), slices.Clone(c.lines)
	out.bad = maps.Clone(c.bad)
	return &out
}

// List returns the schedule's verified records, oldest first by scheduled time (then finishing
// time), each suite once.
func (h *ConfigMapHistory) List(ctx context.Context, schedule *vmbenchv1.BenchmarkSchedule) ([]history.Record, error) {
	chunks, err := h.chunks(ctx, schedule, false)
	if err != nil {
		return nil, err
	}
	var out []history.Record
	seen := map[types.UID]bool{}
	for _, c := range chunks {
		for _, rec := range c.records {
			if seen[rec.UID] {
				continue
			}
			seen[rec.UID] = true
			out = append(out, rec)
		}
	}
	sortRecords(out)
	return out, nil
}

// sortRecords orders records by scheduled time, then finishing time, keeping the written order
// among equals: lines moved between or within ConfigMaps change nothing.
func sortRecords(records []history.Record) {
	sort.SliceStable(records, func(i, j int) bool {
		a, b := records[i], records[j]
		if !a.Scheduled.Equal(b.Scheduled) {
			return a.Scheduled.Before(b.Scheduled)
		}
		return a.Finished.Before(b.Finished)
	})
}

// Append adds rec, signed, at the end of the last ConfigMap, or of a new one when it would not fit,
// then drops the oldest records beyond the bounds.
func (h *ConfigMapHistory) Append(ctx context.Context, schedule *vmbenchv1.BenchmarkSchedule, rec history.Record) (int, error) {
	maxRecords, maxBytes := h.bounds()
	maxKept, _ := h.byteBounds()
	chunks, err := h.chunks(ctx, schedule, false)
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
	key, err := h.Key.HistoryKey(schedule.UID)
	if err != nil {
		return 0, err
	}
	line, err := history.SignLine(key, rec)
	if err != nil {
		return 0, err
	}
	if len(line)+1 > maxBytes {
		return 0, fmt.Errorf("the record of suite %s takes %d bytes, more than a history ConfigMap holds (%d): "+
			"fewer benchmarks or platforms per suite make it smaller", rec.Suite, len(line)+1, maxBytes)
	}
	var last *historyChunk
	if len(chunks) > 0 {
		last = chunks[len(chunks)-1]
	}
	if last == nil || linesSize(last.lines)+len(line)+1 > maxBytes {
		next := 0
		if last != nil {
			next = last.index + 1
		}
		last, err = h.create(ctx, schedule, next, line, rec)
		if err != nil {
			return 0, err
		}
		chunks = append(chunks, last)
	} else {
		last.lines = append(last.lines, line)
		last.records = append(last.records, rec)
		if err := h.write(ctx, schedule, last); err != nil {
			return 0, err
		}
	}
	total++
	size := 0
	for _, c := range chunks {
		size += linesSize(c.lines)
	}
	// The oldest records beyond the bounds go, from the first ConfigMaps on.
	for _, c := range chunks {
		if total <= maxRecords && size <= maxKept {
			break
		}
		drop := 0
		for drop < len(c.records) && (total > maxRecords || size > maxKept) {
			size -= len(c.lines[drop]) + 1
			total--
			drop++
		}
		c.records, c.lines = c.records[drop:], c.lines[drop:]
		if len(c.records) == 0 {
			if err := h.Client.Delete(ctx, c.cm, client.Preconditions{UID: &c.cm.UID}); client.IgnoreNotFound(err) != nil {
				return 0, fmt.Errorf("deleting the emptied history ConfigMap %s: %w", c.cm.Name, err)
			}
			h.remember(schedule.UID, c.cm.Name, nil)
			continue
		}
		if err := h.write(ctx, schedule, c); err != nil {
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

// linesSize is the length of the data that holds lines.
func linesSize(lines []string) int {
	n := 0
	for _, l := range lines {
		n += len(l) + 1
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
func (h *ConfigMapHistory) write(ctx context.Context, schedule *vmbenchv1.BenchmarkSchedule, c *historyChunk) error {
	orig := c.cm.DeepCopy()
	data := joinLines(c.lines)
	c.cm.Data = map[string]string{historyKey: data}
	if err := h.Client.Patch(ctx, c.cm, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("writing the history ConfigMap %s: %w", c.cm.Name, err)
	}
	c.cm.Data = nil
	c.size, c.bad, c.adopted = len(data), nil, 0
	h.remember(schedule.UID, c.cm.Name, c)
	return nil
}

// create makes the history ConfigMap of index n holding one record line.
func (h *ConfigMapHistory) create(ctx context.Context, schedule *vmbenchv1.BenchmarkSchedule, n int, line string, rec history.Record) (*historyChunk, error) {
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
	cm.Data = nil
	c := &historyChunk{cm: cm, index: n, lines: []string{line}, records: []history.Record{rec}, size: len(line) + 1}
	h.remember(schedule.UID, cm.Name, c)
	return c, nil
}
