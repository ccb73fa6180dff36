package results

import (
	"errors"
	"fmt"
	"strings"
)

const (
	unitTflops = "Tflop/s"
	unitGflops = "Gflop/s"
	unitGBs    = "GB/s"
	unitGUPs   = "GUP/s"
	unitUs     = "us"
)

// hpccMetrics lists the Summary keys that are performance figures, in the
// order they are reported. Everything else in the Summary is a problem size,
// a verification value or build information.
var hpccMetrics = []struct {
	key  string
	unit string
	dir  Direction
}{
	{"HPL_Tflops", unitTflops, HigherIsBetter},
	{"StarDGEMM_Gflops", unitGflops, HigherIsBetter},
	{"SingleDGEMM_Gflops", unitGflops, HigherIsBetter},
	{"PTRANS_GBs", unitGBs, HigherIsBetter},
	{"MPIRandomAccess_GUPs", unitGUPs, HigherIsBetter},
	{"MPIRandomAccess_LCG_GUPs", unitGUPs, HigherIsBetter},
	{"StarRandomAccess_GUPs", unitGUPs, HigherIsBetter},
	{"SingleRandomAccess_GUPs", unitGUPs, HigherIsBetter},
	{"StarRandomAccess_LCG_GUPs", unitGUPs, HigherIsBetter},
	{"SingleRandomAccess_LCG_GUPs", unitGUPs, HigherIsBetter},
	{"StarSTREAM_Copy", unitGBs, HigherIsBetter},
	{"StarSTREAM_Scale", unitGBs, HigherIsBetter},
	{"StarSTREAM_Add", unitGBs, HigherIsBetter},
	{"StarSTREAM_Triad", unitGBs, HigherIsBetter},
	{"SingleSTREAM_Copy", unitGBs, HigherIsBetter},
	{"SingleSTREAM_Scale", unitGBs, HigherIsBetter},
	{"SingleSTREAM_Add", unitGBs, HigherIsBetter},
	{"SingleSTREAM_Triad", unitGBs, HigherIsBetter},
	{"StarFFT_Gflops", unitGflops, HigherIsBetter},
	{"SingleFFT_Gflops", unitGflops, HigherIsBetter},
	{"MPIFFT_Gflops", unitGflops, HigherIsBetter},
	{"MinPingPongLatency_usec", unitUs, LowerIsBetter},
	{"AvgPingPongLatency_usec", unitUs, LowerIsBetter},
	{"MaxPingPongLatency_usec", unitUs, LowerIsBetter},
	{"MinPingPongBandwidth_GBytes", unitGBs, HigherIsBetter},
	{"AvgPingPongBandwidth_GBytes", unitGBs, HigherIsBetter},
	{"MaxPingPongBandwidth_GBytes", unitGBs, HigherIsBetter},
	{"NaturallyOrderedRingLatency_usec", unitUs, LowerIsBetter},
	{"RandomlyOrderedRingLatency_usec", unitUs, LowerIsBetter},
	{"NaturallyOrderedRingBandwidth_GBytes", unitGBs, HigherIsBetter},
	{"RandomlyOrderedRingBandwidth_GBytes", unitGBs, HigherIsBetter},
}

const (
	hpccSummaryBegin = "Begin of Summary section."
	hpccSummaryEnd   = "End of Summary section."
)

// ParseHPCC parses hpccoutf.txt, the file HPCC writes next to hpccinf.txt
// (not the mpirun console output). The Summary section gives the metrics
// named after its keys verbatim. Keys reported as -1, which HPCC uses for the
// PingPong and Ring figures of a single-rank run, are left out. A run whose
// Success key is not 1 is rejected because at least one test failed its
// verification.
//
// When HPL ran more than one point (several Ns, NBs or grids in
// hpccinf.txt), each point's Gflop/s from the HPL section follows, named by
// HPLPointMetric. The Summary's HPL_Tflops is then the point with the most
// Gflop/s, not the last nor the one at the largest N: HPCC keeps the figures
// of its fastest run (testdata/hpcc-sweep-np2.txt, Debian's hpcc 1.5.0:
// HPL_Tflops=0.00698076 with HPL_N=200, HPL_NB=64, HPL_nprow=1, HPL_npcol=2
// is the 6.981 Gflop/s point, the second of eight, at the smaller N).
//
// Every one of the 31 performance keys must be in the Summary and be a
// number, or nan/inf, which HPCC prints for a figure it could not compute and
// which is left out like -1; a key missing or unreadable is refused by name.
// So are an HPL result line that cannot be read and, in a sweep, a point
// without its PASSED residual line although Success=1.
func ParseHPCC(output []byte) ([]Metric, error) {
	if isBlank(output) {
		return nil, errors.New("hpcc: empty output")
	}
	summary, ok := lastHPCCSummary(lines(output))
	if !ok {
		return nil, errors.New("hpcc: no \"Begin of Summary section.\" found; pass hpccoutf.txt, not the mpirun console output")
	}
	success, ok := summary["Success"]
	if !ok {
		return nil, errors.New("hpcc: Summary section has no Success key; the output is truncated")
	}
	points, err := HPLPoints(output)
	if err != nil && !errors.Is(err, errNoHPLSection) && !errors.Is(err, errNoHPLResult) {
		return nil, err
	}
	if v, ok := parseNumber(success); !ok || v != 1 {
		var failed []string
		for _, p := range points {
			if !p.Passed {
				failed = append(failed, p.String())
			}
		}
		if len(failed) > 0 {
			return nil, fmt.Errorf("hpcc: run failed verification (Success=%s): HPL %s failed its residual check",
				firstLine(success), strings.Join(failed, ", "))
		}
		return nil, fmt.Errorf("hpcc: run failed verification (Success=%s)", firstLine(success))
	}
	var ms metricList
	var missing []string
	for _, km := range hpccMetrics {
		raw, ok := summary[km.key]
		if !ok {
			missing = append(missing, km.key)
			continue
		}
		v, ok := parseNumber(raw)
		if !ok {
			if hpccNotMeasured(raw) {
				continue
			}
			return nil, fmt.Errorf("hpcc: cannot read the Summary line %q", firstLine(km.key+"="+raw))
		}
		// Negative values are HPCC's "not measured" marker (-1), never a result.
		if v < 0 {
			continue
		}
		ms.add(km.key, v, km.unit, km.dir)
	}
	switch {
	case len(missing) == len(hpccMetrics):
		return nil, errors.New("hpcc: Summary section has no performance figures (no HPL_Tflops= line); the output is cut off or not HPCC's")
	case len(missing) > 0:
		return nil, fmt.Errorf("hpcc: the Summary section has no %s line; the output is cut off or damaged, or from an HPCC build that names its figures otherwise",
			hpccList(missing))
	case ms.empty():
		return nil, errors.New("hpcc: Summary section has no performance figures")
	}
	if len(points) > 1 {
		for _, p := range points {
			// Success=1 means every point passed: a point without its PASSED line is cut off or damaged.
			if !p.Passed {
				return nil, fmt.Errorf("hpcc: the HPL point %s has no PASSED residual check line although Success=1; the HPL section is cut off or damaged", p)
			}
			ms.add(HPLPointMetric(p), p.Gflops, unitGflops, HigherIsBetter)
		}
	}
	return ms.metrics, nil
}

// hpccNotMeasured says whether a Summary value is one that HPCC prints for a
// figure it could not compute (a timer that read zero): nan, inf, with or
// without a sign. Such a figure is left out, like the -1 marker, because the
// tool itself says there is none; any other unreadable value is damage.
func hpccNotMeasured(raw string) bool {
	switch strings.TrimLeft(strings.ToLower(strings.TrimSpace(raw)), "+-") {
	case "nan", "inf", "infinity":
		return true
	}
	return false
}

// hpccList names the first few missing keys, one line long.
func hpccList(keys []string) string {
	const shown = 3
	if len(keys) <= shown {
		return strings.Join(keys, "=, ") + "="
	}
	return fmt.Sprintf("%s= (and %d more)", strings.Join(keys[:shown], "=, "), len(keys)-shown)
}

// lastHPCCSummary returns the key=value pairs of the last Summary section.
// HPCC appends to an existing hpccoutf.txt, so a reused working directory
// holds several runs and only the last one is current. A section cut off
// before its End line is still returned so that the Success check decides.
func lastHPCCSummary(ls []string) (map[string]string, bool) {
	begin := -1
	for i, l := range ls {
		if strings.TrimSpace(l) == hpccSummaryBegin {
			begin = i
		}
	}
	if begin < 0 {
		return nil, false
	}
	summary := map[string]string{}
	for _, l := range ls[begin+1:] {
		l = strings.TrimSpace(l)
		if l == hpccSummaryEnd {
			break
		}
		key, value, ok := strings.Cut(l, "=")
		if !ok {
			continue
		}
		summary[strings.TrimSpace(key)] = strings.TrimSpace(value)
	}
	return summary, true
}
