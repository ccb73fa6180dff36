package history

import (
	"bufio"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// DataKey is the key of a history ConfigMap that holds its records, one JSON record a line.
const DataKey = "records.jsonl"

// maxLine bounds one record line; a history ConfigMap holds under 1 MiB.
const maxLine = 1 << 20

// ParseLines decodes records written one JSON object a line, in their order; blank lines are
// skipped. An error names the line that is not a record.
func ParseLines(data string) ([]Record, error) {
	var out []Record
	sc := bufio.NewScanner(strings.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), maxLine+1)
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" {
			continue
		}
		var rec Record
		if err := json.Unmarshal([]byte(text), &rec); err != nil {
			return nil, fmt.Errorf("line %d is not a history record (%w): each line must be one JSON record", line, err)
		}
		out = append(out, rec)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("line %d: %w", line+1, err)
	}
	return out, nil
}

// FromConfigMaps returns the records of schedule (named name, of UID uid) held in cms, oldest first:
// only the ConfigMaps <name>-history-<n> that the schedule controls count, in the order of n, each
// one's lines in their order. Anyone may label a ConfigMap; only the owner check makes it history.
func FromConfigMaps(name string, uid types.UID, cms []corev1.ConfigMap) ([]Record, error) {
	type chunk struct {
		index int
		cm    *corev1.ConfigMap
	}
	prefix := name + "-history-"
	var chunks []chunk
	for i := range cms {
		cm := &cms[i]
		ref := metav1.GetControllerOf(cm)
		if ref == nil || ref.UID != uid || !strings.HasPrefix(cm.Name, prefix) {
			continue
		}
		n, err := strconv.Atoi(strings.TrimPrefix(cm.Name, prefix))
		if err != nil || n < 0 {
			continue
		}
		chunks = append(chunks, chunk{index: n, cm: cm})
	}
	sort.Slice(chunks, func(i, j int) bool { return chunks[i].index < chunks[j].index })
	var out []Record
	for _, c := range chunks {
		recs, err := ParseLines(c.cm.Data[DataKey])
		if err != nil {
			return nil, fmt.Errorf("ConfigMap %s/%s, key %s: %w; delete the line or the ConfigMap", c.cm.Namespace, c.cm.Name, DataKey, err)
		}
		out = append(out, recs...)
	}
	return out, nil
}
