package results

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"syscall"
)

// fioDirections are the data directions of a fio job, in report order. The
// "sync" object is not one: it has no iops or bandwidth.
var fioDirections = []string{"read", "write", "trim"}

type fioOutput struct {
	Jobs []fioJob `json:"jobs"`
}

type fioJob struct {
	Name  string        `json:"jobname"`
	Error int64         `json:"error"`
	Read  *fioDirection `json:"read"`
	Write *fioDirection `json:"write"`
	Trim  *fioDirection `json:"trim"`
}

func (j fioJob) direction(dir string) *fioDirection {
	switch dir {
	case "read":
		return j.Read
	case "write":
		return j.Write
	case "trim":
		return j.Trim
	}
	return nil
}

// Pointers tell a figure fio left out from a 0.
type fioDirection struct {
	IOPS     *float64    `json:"iops"`
	BW       *float64    `json:"bw"`
	IOBytes  float64     `json:"io_bytes"`
	TotalIOs float64     `json:"total_ios"`
	Clat     *fioLatency `json:"clat_ns"`
	Lat      *fioLatency `json:"lat_ns"`
	// UsecClat is the clat object of fio before 3.0, in microseconds.
	UsecClat json.RawMessage `json:"clat"`
}

func (d *fioDirection) hasIO() bool {
	return d != nil && (d.TotalIOs > 0 || d.IOBytes > 0 || (d.IOPS != nil && *d.IOPS > 0))
}

// complete says which figure of a direction that did I/O is missing: iops,
// bw, the clat_ns and lat_ns means with their sample counts, and clat_ns's
// 99th percentile.
func (d *fioDirection) complete(job, dir string) error {
	missing := ""
	switch {
	case d.IOPS == nil:
		missing = "iops"
	case d.BW == nil:
		missing = "bw"
	case d.Clat == nil && len(d.UsecClat) > 0:
		return fmt.Errorf("fio: job %q %s reports clat in microseconds, not clat_ns: fio before 3.0 is not read; use fio 3.0 or later", job, dir)
	case d.Clat == nil || d.Clat.N <= 0:
		missing = "clat_ns (with its mean and N)"
	case d.Lat == nil || d.Lat.N <= 0:
		missing = "lat_ns (with its mean and N)"
	}
	if missing != "" {
		return fmt.Errorf("fio: job %q %s did I/O but has no %s; the report is damaged", job, dir, missing)
	}
	if _, ok := fioPercentile(d.Clat.Percentile, fioP99); !ok {
		return fmt.Errorf("fio: job %q %s has no 99th percentile in clat_ns.percentile; keep clat_percentiles on and 99 in --percentile_list", job, dir)
	}
	return nil
}

type fioLatency struct {
	Mean       float64            `json:"mean"`
	N          float64            `json:"N"`
	Percentile map[string]float64 `json:"percentile"`
	// Bins is the json+ histogram: bucket value in ns -> sample count.
	Bins map[string]float64 `json:"bins"`
}

// ParseFio parses fio's --output-format=json (or json+) report. For each
// direction that did I/O it returns <dir>_iops, <dir>_bw_kib_per_second,
// <dir>_clat_mean_ns, <dir>_clat_p99_ns and <dir>_lat_mean_ns, with <dir>
// one of read, write, trim.
//
// Jobs with the same name (numjobs>1 without --group_reporting) are merged:
// IOPS and bandwidth are summed, means are weighted by sample count, and p99
// is computed from the merged json+ histogram when every job has one, or
// else is the sample-weighted mean of the jobs' p99 values, an approximation
// that lies between the jobs' own p99s. When the report holds differently
// named jobs, each job's metrics get a "<jobname>_" prefix (snake_case).
//
// Warnings printed before the JSON are skipped. A job whose error field is
// not 0 makes the whole report an error, and so does a direction that did I/O
// without iops, bw, clat_ns and lat_ns (with their N) or clat_ns's 99th
// percentile.
func ParseFio(output []byte) ([]Metric, error) {
	if isBlank(output) {
		return nil, errors.New("fio: empty output")
	}
	report, err := fioDecode(output)
	if err != nil {
		return nil, err
	}
	if len(report.Jobs) == 0 {
		return nil, errors.New("fio: report has no jobs")
	}
	var names []string
	groups := map[string][]fioJob{}
	for _, j := range report.Jobs {
		if j.Error != 0 {
			return nil, fmt.Errorf("fio job %q failed with %s", j.Name, fioErrorText(j.Error))
		}
		for _, dir := range fioDirections {
			if d := j.direction(dir); d.hasIO() {
				if err := d.complete(firstLine(j.Name), dir); err != nil {
					return nil, err
				}
			}
		}
		if _, ok := groups[j.Name]; !ok {
			names = append(names, j.Name)
		}
		groups[j.Name] = append(groups[j.Name], j)
	}
	prefixes := make([]string, len(names))
	if len(names) > 1 {
		for i, p := range uniquePrefixes(names) {
			prefixes[i] = p + "_"
		}
	}
	var ms metricList
	for i, name := range names {
		for _, dir := range fioDirections {
			fioAddDirection(&ms, prefixes[i]+dir, groups[name], dir)
		}
	}
	if ms.empty() {
		return nil, errors.New("fio: no job did any I/O")
	}
	return ms.metrics, nil
}

// fioDecode skips anything before the JSON (fio prints warnings such as
// "fio: io_u error" or option deprecations there) and returns the last
// complete report, because --status-interval appends one report per interval
// and the final one comes last.
func fioDecode(output []byte) (fioOutput, error) {
	start := fioJSONStart(output)
	if start < 0 {
		return fioOutput{}, errors.New("fio: output is not JSON; run fio with --output-format=json")
	}
	dec := json.NewDecoder(bytes.NewReader(output[start:]))
	var last fioOutput
	found := false
	for {
		var report fioOutput
		err := dec.Decode(&report)
		if err == io.EOF {
			break
		}
		if err != nil {
			if found {
				// Trailing text after a complete report is harmless.
				break
			}
			return fioOutput{}, fmt.Errorf("fio: invalid JSON: %s", firstLine(err.Error()))
		}
		if len(report.Jobs) > 0 || !found {
			last, found = report, true
		}
	}
	return last, nil
}

// fioJSONStart returns the offset of the first line that starts with "{",
// falling back to the first "{" anywhere.
func fioJSONStart(output []byte) int {
	for offset := 0; offset < len(output); {
		line := output[offset:]
		if nl := bytes.IndexByte(line, '\n'); nl >= 0 {
			line = line[:nl+1]
		}
		if trimmed := bytes.TrimLeft(line, " \t"); len(trimmed) > 0 && trimmed[0] == '{' {
			return offset + len(line) - len(trimmed)
		}
		offset += len(line)
	}
	return bytes.IndexByte(output, '{')
}

// fioErrorText renders a job's error field, an errno value, with the
// system's description when it has one.
func fioErrorText(code int64) string {
	const maxErrno = 4096
	if code > 0 && code < maxErrno {
		return fmt.Sprintf("error %d (%s)", code, syscall.Errno(code).Error())
	}
	return fmt.Sprintf("error %d", code)
}

func fioAddDirection(ms *metricList, name string, jobs []fioJob, dir string) {
	var active []*fioDirection
	for _, j := range jobs {
		if d := j.direction(dir); d.hasIO() {
			active = append(active, d)
		}
	}
	if len(active) == 0 {
		return
	}
	var iops, bw float64
	for _, d := range active {
		iops += *d.IOPS
		bw += *d.BW
	}
	ms.add(name+"_iops", iops, unitIOPS, HigherIsBetter)
	ms.add(name+"_bw_kib_per_second", bw, unitKiBPerS, HigherIsBetter)
	if mean, ok := fioWeightedMean(active, func(d *fioDirection) fioLatency { return *d.Clat }); ok {
		ms.add(name+"_clat_mean_ns", mean, unitNs, LowerIsBetter)
	}
	if p99, ok := fioClatP99(active); ok {
		ms.add(name+"_clat_p99_ns", p99, unitNs, LowerIsBetter)
	}
	if mean, ok := fioWeightedMean(active, func(d *fioDirection) fioLatency { return *d.Lat }); ok {
		ms.add(name+"_lat_mean_ns", mean, unitNs, LowerIsBetter)
	}
}

// fioWeightedMean weights each job's mean by its sample count N; a lone job
// is returned as is even if fio left N out.
func fioWeightedMean(ds []*fioDirection, pick func(*fioDirection) fioLatency) (float64, bool) {
	if len(ds) == 1 {
		l := pick(ds[0])
		return l.Mean, l.N > 0 || l.Mean > 0
	}
	var sum, n float64
	for _, d := range ds {
		l := pick(d)
		if l.N <= 0 {
			continue
		}
		sum += l.Mean * l.N
		n += l.N
	}
	if n == 0 {
		return 0, false
	}
	return sum / n, true
}

const fioP99 = 99.0

func fioClatP99(ds []*fioDirection) (float64, bool) {
	if len(ds) == 1 {
		if v, ok := fioPercentile(ds[0].Clat.Percentile, fioP99); ok {
			return v, true
		}
	}
	allBins := true
	for _, d := range ds {
		if len(d.Clat.Bins) == 0 {
			allBins = false
			break
		}
	}
	if allBins {
		if v, ok := fioHistogramPercentile(ds, fioP99); ok {
			return v, true
		}
	}
	var sum, n float64
	for _, d := range ds {
		v, ok := fioPercentile(d.Clat.Percentile, fioP99)
		if !ok {
			continue
		}
		weight := d.Clat.N
		if weight <= 0 {
			weight = 1
		}
		sum += v * weight
		n += weight
	}
	if n == 0 {
		return 0, false
	}
	return sum / n, true
}

// fioPercentile finds percentile p among keys such as "99.000000", whose
// number of decimals depends on --percentile_list.
func fioPercentile(percentiles map[string]float64, p float64) (float64, bool) {
	keys := make([]string, 0, len(percentiles))
	for key := range percentiles {
		keys = append(keys, key)
	}
	// Sorted so that duplicate spellings of the same percentile resolve the
	// same way on every call.
	sort.Strings(keys)
	for _, key := range keys {
		if k, ok := parseNumber(strings.TrimSpace(key)); ok && k == p {
			return percentiles[key], true
		}
	}
	return 0, false
}

// fioHistogramPercentile merges the json+ clat histograms and returns the
// first bucket whose cumulative count reaches p percent of all samples,
// which is how fio itself derives the percentiles it prints.
func fioHistogramPercentile(ds []*fioDirection, p float64) (float64, bool) {
	counts := map[float64]float64{}
	var total float64
	for _, d := range ds {
		for key, c := range d.Clat.Bins {
			bucket, ok := parseNumber(key)
			if !ok || c <= 0 {
				continue
			}
			counts[bucket] += c
			total += c
		}
	}
	if total <= 0 {
		return 0, false
	}
	buckets := make([]float64, 0, len(counts))
	for b := range counts {
		buckets = append(buckets, b)
	}
	sort.Float64s(buckets)
	threshold := p / 100 * total
	var cumulative float64
	for _, b := range buckets {
		cumulative += counts[b]
		if cumulative >= threshold {
			return b, true
		}
	}
	return buckets[len(buckets)-1], true
}
