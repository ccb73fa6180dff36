package v1alpha1

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestDurationParse(t *testing.T) {
	tests := []struct {
		in      Duration
		want    time.Duration
		wantErr string
	}{
		{in: "10s", want: 10 * time.Second},
		{in: "1h30m", want: 90 * time.Minute},
		{in: "30m0s", want: 30 * time.Minute},
		{in: "1.5h", want: 90 * time.Minute},
		{in: "1500ms", want: 1500 * time.Millisecond},
		{in: "0s", want: 0},
		{in: "1d", wantErr: `"1d" is not a duration: write it as 24h`},
		{in: "2d", wantErr: "write it as 48h"},
		{in: "soon", wantErr: `"soon" is not a duration: write it as a number and a unit h, m or s`},
		{in: "-1h", wantErr: "without a sign"},
		{in: "+1h", wantErr: "without a sign"},
		{in: "1.5.h", wantErr: "is not a duration"},
		{in: "10", wantErr: "is not a duration"},
		{in: "", wantErr: `"" is not a duration`},
		{in: " 10s", wantErr: "is not a duration"},
		{in: "9999999h", wantErr: "is not a duration"},
	}
	for _, tt := range tests {
		t.Run(string(tt.in), func(t *testing.T) {
			got, err := tt.in.Parse()
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Parse() = %v, %v, want an error containing %q", got, err, tt.wantErr)
				}
				if tt.in.Duration() != 0 {
					t.Errorf("Duration() = %v, want 0 for a value that does not parse", tt.in.Duration())
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("Parse() = %v, %v, want %v", got, err, tt.want)
			}
			if tt.in.Duration() != tt.want {
				t.Errorf("Duration() = %v, want %v", tt.in.Duration(), tt.want)
			}
		})
	}
}

// The JSON of a Duration is the string itself, as metav1.Duration's was, so the runner's plans and
// stored suites read the same.
func TestDurationJSON(t *testing.T) {
	raw, err := json.Marshal(SysbenchCPUParams{Duration: DurationOf(90 * time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"duration":"1m30s"}`; string(raw) != want {
		t.Errorf("Marshal() = %s, want %s", raw, want)
	}
	var p SysbenchCPUParams
	if err := json.Unmarshal([]byte(`{"duration":"1d"}`), &p); err != nil {
		t.Fatalf("Unmarshal() of a value that is no duration = %v, want no error", err)
	}
	if *p.Duration != "1d" {
		t.Errorf("Unmarshal() = %q, want 1d kept as written", *p.Duration)
	}
}

// Every value time.Duration.String writes in the range the CRD accepts is accepted by the CRD's
// syntax rule, so the defaults written by WithDefaults pass it.
func TestDurationOfMatchesTheSyntax(t *testing.T) {
	for _, d := range []time.Duration{time.Second, 10 * time.Second, 30 * time.Minute, 6 * time.Hour, 720 * time.Hour, 1500 * time.Millisecond} {
		if _, err := DurationOf(d).Parse(); err != nil {
			t.Errorf("DurationOf(%v).Parse() = %v", d, err)
		}
	}
}
