package results

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// HPLPoint is one HPL run inside an HPCC execution: one problem size, block size and process
// grid. HPCC runs HPL once for every combination of the Ns, NBs and grids of hpccinf.txt, grids
// outermost, then problem sizes, then block sizes.
type HPLPoint struct {
	N, NB, P, Q int
	// Seconds is HPL's wall time, printed to 0.01 s; Gflops its rate, printed to 4 digits.
	Seconds, Gflops float64
	// Passed says that the point's scaled residual check printed PASSED; false when it printed
	// FAILED or the output ends before the check.
	Passed bool
}

func (p HPLPoint) String() string {
	return fmt.Sprintf("N=%d NB=%d P=%d Q=%d", p.N, p.NB, p.P, p.Q)
}

const (
	hplSectionBegin = "Begin of HPL section."
	hplSectionEnd   = "End of HPL section."
	// hplPointPrefix starts every point's metric name; HPLPointMetric spells it out.
	hplPointPrefix = "HPL_Gflops_"
)

// hplVariant is the T/V column of a wall-time result line, such as WR11C2R4: W, the process
// mapping (R or C), lookahead depth, broadcast, recursive factorization, NDIV, panel factorization
// and NBMIN.
var hplVariant = regexp.MustCompile(`^W[RC][0-9]+[0-9][LCR][0-9]+[LCR][0-9]+$`)

var (
	errNoHPLSection = errors.New("hpcc: no \"Begin of HPL section.\" found")
	errNoHPLResult  = errors.New("hpcc: the HPL section has no result line (T/V N NB P Q Time Gflops)")
)

// HPLPoints returns every HPL run of the last HPL section of hpccoutf.txt, in the order HPL ran
// them. HPCC appends to an existing hpccoutf.txt, so only the last section is current.
func HPLPoints(output []byte) ([]HPLPoint, error) {
	ls := lines(output)
	begin := -1
	for i, l := range ls {
		if strings.TrimSpace(l) == hplSectionBegin {
			begin = i
		}
	}
	if begin < 0 {
		return nil, errNoHPLSection
	}
	var points []HPLPoint
	// After a "T/V  N  NB ..." title, the next line that is not a rule must be
	// the result; one that cannot be read is refused rather than skipped.
	expectResult := false
	for _, l := range ls[begin+1:] {
		l = strings.TrimSpace(l)
		if l == hplSectionEnd {
			break
		}
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "T/V" && f[1] == "N" {
			expectResult = true
			continue
		}
		if expectResult && (l == "" || strings.Trim(l, "-") == "") {
			continue
		}
		if p, ok := parseHPLResult(l); ok {
			points = append(points, p)
			expectResult = false
			continue
		}
		if expectResult {
			return nil, fmt.Errorf("hpcc: cannot read the HPL result line %q (want T/V N NB P Q Time Gflops)", firstLine(l))
		}
		// The residual line of the point above: ||Ax-b||_oo/(...)=   0.0076117 ...... PASSED
		if strings.HasPrefix(l, "||Ax-b||_oo/") && len(points) > 0 {
			points[len(points)-1].Passed = strings.HasSuffix(l, "PASSED")
		}
	}
	if expectResult {
		return nil, errors.New("hpcc: the HPL section ends after a result title (T/V N NB P Q Time Gflops) without its result line")
	}
	if len(points) == 0 {
		return nil, errNoHPLResult
	}
	return points, nil
}

// parseHPLResult reads a result line: WR11C2R4  200  32  1  2  0.27  1.992e-02.
func parseHPLResult(l string) (HPLPoint, bool) {
	f := strings.Fields(l)
	if len(f) != 7 || !hplVariant.MatchString(f[0]) {
		return HPLPoint{}, false
	}
	var ints [4]int
	for i := range ints {
		v, err := strconv.Atoi(f[i+1])
		if err != nil || v < 1 {
			return HPLPoint{}, false
		}
		ints[i] = v
	}
	seconds, ok1 := parseNumber(f[5])
	gflops, ok2 := parseNumber(f[6])
	if !ok1 || !ok2 || seconds < 0 || gflops < 0 {
		return HPLPoint{}, false
	}
	return HPLPoint{N: ints[0], NB: ints[1], P: ints[2], Q: ints[3], Seconds: seconds, Gflops: gflops}, true
}

// HPLPointMetric is the name of a point's Gflop/s metric, such as HPL_Gflops_N2048_NB64_P2_Q3:
// HPCC's HPL_ prefix, and every parameter that tells the point apart, so that a report recovers them
// with ParseHPLPointMetric.
func HPLPointMetric(p HPLPoint) string {
	return fmt.Sprintf("%sN%d_NB%d_P%d_Q%d", hplPointPrefix, p.N, p.NB, p.P, p.Q)
}

var hplPointName = regexp.MustCompile(`^` + hplPointPrefix + `N([0-9]+)_NB([0-9]+)_P([0-9]+)_Q([0-9]+)$`)

// ParseHPLPointMetric recovers N, NB, P and Q from a metric name that HPLPointMetric made; ok is
// false for any other name.
func ParseHPLPointMetric(name string) (p HPLPoint, ok bool) {
	m := hplPointName.FindStringSubmatch(name)
	if m == nil {
		return HPLPoint{}, false
	}
	var v [4]int
	for i := range v {
		n, err := strconv.Atoi(m[i+1])
		if err != nil {
			return HPLPoint{}, false
		}
		v[i] = n
	}
	return HPLPoint{N: v[0], NB: v[1], P: v[2], Q: v[3]}, true
}

// IsHPLPointMetric says whether name is a point of an HPL sweep.
func IsHPLPointMetric(name string) bool { return hplPointName.MatchString(name) }
