package report

import (
	"bytes"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
)

// checkPNG decodes a plot and insists that it is big and busy enough to hold a readable chart.
func checkPNG(t *testing.T, path string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	b := img.Bounds()
	if len(data) < 20_000 || b.Dx() < 600 || b.Dy() < 300 {
		t.Errorf("%s: %d bytes, %dx%d pixels: too small to be a readable chart", filepath.Base(path), len(data), b.Dx(), b.Dy())
	}
	// A chart is mostly white background with some colour; count non-white pixels on a grid.
	inked, total := 0, 0
	for y := b.Min.Y; y < b.Max.Y; y += 4 {
		for x := b.Min.X; x < b.Max.X; x += 4 {
			r, g, bl, _ := img.At(x, y).RGBA()
			total++
			if r < 0xF000 || g < 0xF000 || bl < 0xF000 {
				inked++
			}
		}
	}
	if share := float64(inked) / float64(total); share < 0.02 || share > 0.9 {
		t.Errorf("%s: %.1f%% of pixels are not white", filepath.Base(path), share*100)
	}
}

func TestWritePlotsDemo(t *testing.T) {
	dir := t.TempDir()
	out, err := WritePlots(demoSuite(), PlotOptions{Dir: filepath.Join(dir, "plots"), SVG: true})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range out.Files {
		names = append(names, filepath.Base(f))
	}
	sort.Strings(names)
	var want []string
	for _, base := range []string{"hpcc-n4000-means", "hpcc-n8000-means", "sysbench-cpu-means", "iozone-means", "iperf3-means",
		"hpcc-n4000-boxes", "hpcc-n8000-boxes", "sysbench-cpu-boxes", "iperf3-boxes",
		"hpl-over-n", "iozone-write-heatmap", "iozone-read-heatmap", "iperf3-samples",
		"forest-overview", "hpcc-n4000-forest", "hpcc-n8000-forest", "sysbench-cpu-forest", "iozone-forest", "iperf3-forest"} {
		want = append(want, base+".png", base+".svg")
	}
	sort.Strings(want)
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
	// The demo has every kind of data; only iozone's samples were dropped from its status.
	wantNotes := []string{"iozone: box plots skipped, the status dropped the samples of every metric (it keeps their count, mean and stddev)",
		"iperf3: iperf3 time series skipped, no table was kept"}
	if diff := cmp.Diff(wantNotes, out.Notes); diff != "" {
		t.Errorf("notes (-want +got):\n%s", diff)
	}
	for _, f := range out.Files {
		if strings.HasSuffix(f, ".png") {
			checkPNG(t, f)
			continue
		}
		svg, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		// A forest plot of a few rows is a smaller file than any other chart.
		minSize := 5_000
		if strings.HasSuffix(f, "-forest.svg") {
			minSize = 3_000
		}
		if !bytes.Contains(svg, []byte("<svg")) || len(svg) < minSize {
			t.Errorf("%s: not an SVG of a chart (%d bytes)", f, len(svg))
		}
	}
	// Titles and axes carry units and mark emulation; SVG keeps the text searchable.
	for file, texts := range map[string][]string{
		"hpl-over-n.svg":         {"HPL performance [Gflop/s]", "vm (emulated)", "not a measure of VM overhead", "n=1 rep, no CI", "n=3 reps"},
		"sysbench-cpu-means.svg": {"events/s (higher better)", "ms (lower better)", "vm (emulated)", "95% CI (Student t) over repetitions", "n=3 reps"},
		// The emulated VM is 10 times slower than the container: each platform is drawn relative to
		// its median, except latency_max_ms, where both share an axis in ms.
		"sysbench-cpu-boxes.svg": {"diamonds: repetition means", "% from the platform's median", "[events/s, higher better]",
			"9 values, 3 reps", "median 1003", "median 95.5", "vm (emulated)", "latency_max_ms", "[ms, lower better]"},
		// One VM repetition of hpcc-n8000 survived: its column has one value.
		"hpcc-n8000-boxes.svg":     {"3 values, 3 reps", "1 value, 1 rep"},
		"iperf3-boxes.svg":         {"15 values, 3 reps", "node pair"},
		"iozone-read-heatmap.svg":  {"[MiB/s]", "file size", "record size", "64M", "1M", "vm (emulated)", "mean of 9 values", "grey: not measured"},
		"iperf3-samples.svg":       {"bandwidth [Gbit/s]", "per-second intervals", "r3 node01-node02", "vm (emulated)"},
		"hpcc-n8000-means.svg":     {"Tflop/s (higher better)", "us (lower better)", "n=1 rep, no CI"},
		"iozone-write-heatmap.svg": {"write [MiB/s]"},
	} {
		svg, err := os.ReadFile(filepath.Join(dir, "plots", file))
		if err != nil {
			t.Fatal(err)
		}
		for _, text := range texts {
			if !bytes.Contains(svg, []byte(svgEscape(text))) {
				t.Errorf("%s lacks %q", file, text)
			}
		}
	}
}

// svgEscape spells text as vgsvg writes it.
func svgEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", "'", "&#39;").Replace(s)
}

func TestWritePlotsSkips(t *testing.T) {
	// One problem size, iozone with one file and record size (bare metric names), no iperf3.
	suite := demoSuite()
	suite.Spec.Benchmarks = []vmbenchv1.Benchmark{
		suite.Spec.Benchmarks[0], suite.Spec.Benchmarks[2],
		{Name: "iozone", Type: vmbenchv1.BenchmarkIozone},
	}
	var kept []vmbenchv1.BenchmarkResult
	for _, r := range suite.Status.Results {
		switch r.Benchmark {
		case "hpcc-n4000", "sysbench-cpu":
			kept = append(kept, r)
		case "iozone":
			r.Metrics = []vmbenchv1.MetricSummary{summary("write", "KiB/s", vmbenchv1.HigherIsBetter,
				[]vmbenchv1.Sample{{Repetition: 1, Node: "master", Value: 4e5}, {Repetition: 2, Node: "master", Value: 4.2e5}})}
			kept = append(kept, r)
		}
	}
	suite.Status.Results = kept
	out, err := WritePlots(suite, PlotOptions{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range out.Files {
		names = append(names, filepath.Base(f))
	}
	if diff := cmp.Diff([]string{"forest-overview.png", "hpcc-n4000-forest.png", "sysbench-cpu-forest.png", "iozone-forest.png",
		"hpcc-n4000-means.png", "sysbench-cpu-means.png", "iozone-means.png",
		"hpcc-n4000-boxes.png", "sysbench-cpu-boxes.png", "iozone-boxes.png"}, names); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
	wantNotes := []string{
		"HPL over N: skipped, the suite has no sweep (it needs an hpcc benchmark with problemSizes, blockSizes or grids, " +
			"or hpcc benchmarks with at least 2 different spec problemSize values, found 1)",
		"iozone: iozone heatmap skipped, it runs one file and record size (set iozone.auto for the whole table)",
		"iperf3 samples: skipped, the suite has no iperf3 benchmark",
		"iperf3 time series: skipped, the suite has no iperf3 benchmark",
	}
	if diff := cmp.Diff(wantNotes, out.Notes); diff != "" {
		t.Errorf("notes (-want +got):\n%s", diff)
	}
	for _, f := range out.Files {
		checkPNG(t, f)
	}
}

func TestWritePlotsTrimmedIperf3(t *testing.T) {
	suite := demoSuite()
	for i := range suite.Status.Results {
		if suite.Status.Results[i].Benchmark == "iperf3" && suite.Status.Results[i].Platform == "vm" {
			suite.Status.Results[i].Metrics[0].Samples = nil
		}
	}
	out, err := WritePlots(suite, PlotOptions{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"iozone: box plots skipped, the status dropped the samples of every metric (it keeps their count, mean and stddev)",
		"iperf3 on vm: no iperf3 samples plotted, the status dropped them (count 15, mean 913.5M bit/s)",
		"iperf3: iperf3 time series skipped, no table was kept",
	}
	if diff := cmp.Diff(want, out.Notes); diff != "" {
		t.Errorf("notes (-want +got):\n%s", diff)
	}
}

func TestWritePlotsErrors(t *testing.T) {
	empty := demoSuite()
	empty.Status = vmbenchv1.BenchmarkSuiteStatus{}
	if _, err := WritePlots(empty, PlotOptions{Dir: t.TempDir()}); err == nil || err.Error() != "suite bench/demo has no results to plot" {
		t.Errorf("err = %v", err)
	}
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := WritePlots(demoSuite(), PlotOptions{Dir: filepath.Join(file, "plots")}); err == nil {
		t.Error("a directory under a file must fail")
	}
}

func TestIozoneCell(t *testing.T) {
	tests := []struct {
		name            string
		test, file, rec string
		matches         bool
	}{
		{"write_65536k_64k", "write", "65536", "64", true},
		{"random_read_1024k_4k", "random_read", "1024", "4", true},
		{"shared_record_rewrite_512k_512k", "shared_record_rewrite", "512", "512", true},
		{"rootfs_write_65536k_64k", "rootfs_write", "65536", "64", true},
		{"write", "", "", "", false},
		{"bs1K_mib_per_second", "", "", "", false},
	}
	for _, tt := range tests {
		sub := iozoneCell.FindStringSubmatch(tt.name)
		if (sub != nil) != tt.matches || (sub != nil && (sub[1] != tt.test || sub[2] != tt.file || sub[3] != tt.rec)) {
			t.Errorf("%s: %q", tt.name, sub)
		}
	}
}

func TestWritePlotsBoxesOfOneValue(t *testing.T) {
	// One repetition on one node: a box of one value says nothing, so there is none, and a note.
	suite := demoSuite()
	suite.Spec.Benchmarks = suite.Spec.Benchmarks[:1]
	var kept []vmbenchv1.BenchmarkResult
	for _, r := range suite.Status.Results {
		if r.Benchmark == "hpcc-n4000" {
			for i := range r.Metrics {
				r.Metrics[i] = summary(r.Metrics[i].Name, r.Metrics[i].Unit, r.Metrics[i].Direction, r.Metrics[i].Samples[:1])
			}
			kept = append(kept, r)
		}
	}
	suite.Status.Results = kept
	out, err := WritePlots(suite, PlotOptions{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range out.Files {
		if strings.Contains(f, "boxes") {
			t.Errorf("box plot of single values: %s", f)
		}
	}
	want := "hpcc-n4000: box plots skipped, every platform measured one value per metric (one node, one repetition; raise spec.repetitions)"
	if !slices.Contains(out.Notes, want) {
		t.Errorf("notes %q lack %q", out.Notes, want)
	}
}
