package report

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
)

func noisySample(rep int32, node string, v, noise float64) vmbenchv1.Sample {
	return vmbenchv1.Sample{Repetition: rep, Node: node, Value: v, Noise: &noise}
}

// noiseSuite has one metric per platform: the container's with one noisy sample out of four, the
// VM's trimmed by the controller (more measured than kept), with one noisy sample kept.
func noiseSuite() *vmbenchv1.BenchmarkSuite {
	s := demoSuite()
	s.Status.Results = []vmbenchv1.BenchmarkResult{
		{Benchmark: "sysbench-cpu", Platform: "container", Metrics: []vmbenchv1.MetricSummary{summary("events_per_second", "ops/s", vmbenchv1.HigherIsBetter, []vmbenchv1.Sample{
			noisySample(1, "master", 100, 2), noisySample(1, "node01", 102, 10), noisySample(2, "master", 60, 35.5),
			{Repetition: 2, Node: "node01", Value: 98}, // not sampled: never counted as noisy
		})}},
		{Benchmark: "sysbench-cpu", Platform: "vm", Metrics: []vmbenchv1.MetricSummary{{
			Name: "events_per_second", Unit: "ops/s", Direction: vmbenchv1.HigherIsBetter, N: 5, Mean: 90, StdDev: 3,
			Samples: []vmbenchv1.Sample{noisySample(1, "master", 91, 0), noisySample(1, "node01", 89, 12)},
		}}},
	}
	return s
}

func TestNoisySamples(t *testing.T) {
	got := NoisySamples(noiseSuite(), DefaultNoiseThreshold)
	want := Noisy{{"sysbench-cpu", "container", "events_per_second"}: 1, {"sysbench-cpu", "vm", "events_per_second"}: 1}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	// The threshold is exclusive: a sample at exactly 10% is not noisy; at 1% three are.
	if got := NoisySamples(noiseSuite(), 1).Total(); got != 4 {
		t.Errorf("at 1%%: %d noisy samples, want 4", got)
	}
}

func TestDropNoisy(t *testing.T) {
	suite := noiseSuite()
	filtered, dropped, kept := DropNoisy(suite, DefaultNoiseThreshold)
	if dropped != 1 {
		t.Errorf("dropped %d, want 1", dropped)
	}
	c := filtered.Status.Results[0].Metrics[0]
	if c.N != 3 || len(c.Samples) != 3 || c.Mean != 100 || c.StdDev != 2 {
		t.Errorf("container after dropping: N %d, %d samples, mean %g, stddev %g; want 3, 3, 100, 2", c.N, len(c.Samples), c.Mean, c.StdDev)
	}
	// The VM's statistics cover samples the status no longer has, so they cannot be filtered.
	if diff := cmp.Diff(Noisy{{"sysbench-cpu", "vm", "events_per_second"}: 1}, kept); diff != "" {
		t.Errorf("kept (-want +got):\n%s", diff)
	}
	if v := filtered.Status.Results[1].Metrics[0]; v.N != 5 || len(v.Samples) != 2 {
		t.Errorf("trimmed VM metric changed: %+v", v)
	}
	// The input is left alone.
	if suite.Status.Results[0].Metrics[0].N != 4 {
		t.Error("DropNoisy changed its input")
	}
	// Every sample dropped leaves no value, not a zero.
	all, dropped, _ := DropNoisy(suite, -1)
	if m := all.Status.Results[0].Metrics[0]; dropped != 3 || m.N != 1 {
		t.Errorf("below every noise: dropped %d, N %d", dropped, m.N)
	}
}

func TestMarkNoisyAndNotes(t *testing.T) {
	suite := noiseSuite()
	rep, err := Build(suite)
	if err != nil {
		t.Fatal(err)
	}
	noisy := NoisySamples(suite, DefaultNoiseThreshold)
	marked := MarkNoisy(rep.Rows, noisy)
	if len(marked) != 1 || marked[0].Platform != "vm "+NoisyMarker {
		t.Fatalf("marked rows: %+v", marked)
	}
	if rep.Rows[0].Platform != "vm" {
		t.Error("MarkNoisy changed the report's own rows, which CSV and JSON write")
	}
	notes := NoiseNotes(noisy, DefaultNoiseThreshold, 0, false)
	if len(notes) != 1 || !strings.Contains(notes[0], "2 sample(s)") || !strings.Contains(notes[0], "exceeded 10%") ||
		!strings.Contains(notes[0], "sysbench-cpu events_per_second on container (1)") || !strings.Contains(notes[0], "--drop-noisy") {
		t.Errorf("notes: %q", notes)
	}
	notes = NoiseNotes(Noisy{}, DefaultNoiseThreshold, 4, true)
	if len(notes) != 1 || !strings.Contains(notes[0], "4 sample(s)") {
		t.Errorf("notes after dropping: %q", notes)
	}
	if notes := NoiseNotes(Noisy{}, DefaultNoiseThreshold, 0, false); len(notes) != 0 {
		t.Errorf("no noise, yet notes: %q", notes)
	}
}
