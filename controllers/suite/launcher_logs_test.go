package suite

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubevirtv1 "kubevirt.io/api/core/v1"

	"github.com/vmbench/vmbench/internal/frame"
	"github.com/vmbench/vmbench/internal/runner"
)

// migratedRun is a run's log cut into one piece per message (the message's frame lines, once),
// with the keys that check it.
func migratedRun(t *testing.T) (pieces [][]byte, ids []string, keys frameKeys) {
	t.Helper()
	keys = frameKeys{run: "demo-vm-1", tokens: map[string][]byte{"demo-vm-1": []byte("token-1")}}
	var buf bytes.Buffer
	emit := runner.FrameEmitter(&buf, keys.tokens["demo-vm-1"], 1, "s0")
	for _, m := range runOf("demo-vm-1") {
		if err := emit(m); err != nil {
			t.Fatal(err)
		}
		piece := bytes.Clone(buf.Bytes())
		buf.Reset()
		scan := frame.ScanAll(bytes.NewReader(piece), keys.tokenFor)
		if len(scan.Messages) != 1 {
			t.Fatalf("one message gave %d frames: %v", len(scan.Messages), scan.Err())
		}
		pieces = append(pieces, piece)
		ids = append(ids, scan.Messages[0].ID)
	}
	return pieces, ids, keys
}

func scanOf(keys frameKeys, pod string, logs ...[]byte) podFrames {
	return podFrames{pod: pod, scan: frame.ScanAll(bytes.NewReader(bytes.Join(logs, nil)), keys.tokenFor)}
}

func idsOf(decoded []frame.Decoded) []string {
	out := make([]string, 0, len(decoded))
	for _, d := range decoded {
		out = append(out, d.ID)
	}
	return out
}

// headerOf is the header line of a message's frame: a switch-over between its lines leaves it alone.
func headerOf(piece []byte) []byte { return piece[:bytes.IndexByte(piece, '\n')+1] }

// half is the first half of a message's frame: the switch-over cut it mid-line.
func half(piece []byte) []byte { return piece[:len(piece)/2] }

// Protects issue 32 item 1: the frames of a migrated VMI's launcher pods are merged by ID, each
// counted once, in the order they were written; a frame the switch-over cut is no corrupt frame
// when another log holds it whole, and a named lost message when none does.
func TestMergeFramesAcrossAMigration(t *testing.T) {
	p, ids, keys := migratedRun(t)
	if len(p) != 5 {
		t.Fatalf("the run has %d messages, want 5 (started, 3 results, done)", len(p))
	}
	join := func(b ...[]byte) []byte { return bytes.Join(b, nil) }
	tests := []struct {
		name      string
		parts     []podFrames
		want      []string
		frameErr  string
		lostNamed string
	}{{
		name: "cut at the end of the source, whole again in the target, with duplicates",
		parts: []podFrames{
			scanOf(keys, "src", join(p[0], p[1], half(p[2]))),
			scanOf(keys, "dst", join(p[1], p[2], p[3], p[4])),
		},
		want: ids,
	}, {
		name: "cut at the switch-over and in no log whole: lost, named, not corrupt",
		parts: []podFrames{
			scanOf(keys, "src", join(p[0], p[1], half(p[2]))),
			scanOf(keys, "dst", join(p[2][len(p[2])/2:], p[3], p[4])),
		},
		want:      []string{ids[0], ids[1], ids[3], ids[4]},
		lostNamed: ids[2] + " (cut in the log of pod src)",
	}, {
		name: "header in the source, data in the target: joined across the switch-over",
		parts: []podFrames{
			scanOf(keys, "src", join(p[0], p[1], headerOf(p[2]))),
			scanOf(keys, "dst", join(p[2][len(headerOf(p[2])):], p[3], p[4])),
		},
		want: ids,
	}, {
		name: "the target's first frame cut at its start and whole in the source",
		parts: []podFrames{
			scanOf(keys, "src", join(p[0], p[1], p[2])),
			scanOf(keys, "dst", join(p[2][len(p[2])/2:], p[3], p[4])),
		},
		want: ids,
	}, {
		name: "a frame cut inside a log, not at a switch-over, stays a corrupt frame",
		parts: []podFrames{
			scanOf(keys, "src", join(p[0], half(p[1]), p[2])),
			scanOf(keys, "dst", join(p[3], p[4])),
		},
		want:     []string{ids[0], ids[2], ids[3], ids[4]},
		frameErr: "frame " + ids[1],
	}, {
		name:     "one log only (no migration): a cut last frame is a corrupt frame, as before",
		parts:    []podFrames{scanOf(keys, "src", join(p[0], p[1], half(p[2])))},
		want:     ids[:2],
		frameErr: "frame " + ids[2],
	}, {
		name: "three pods, each message once, in the order written",
		parts: []podFrames{
			scanOf(keys, "a", join(p[0], p[1])),
			scanOf(keys, "b", join(p[1], p[2], p[3])),
			scanOf(keys, "c", join(p[3], p[4], p[0])),
		},
		want: ids,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			decoded, frameErr, lost := mergeFrames(tt.parts, keys.tokenFor)
			if got := strings.Join(idsOf(decoded), ","); got != strings.Join(tt.want, ",") {
				t.Errorf("merged messages = %s, want %s", got, strings.Join(tt.want, ","))
			}
			switch {
			case tt.frameErr == "" && frameErr != nil:
				t.Errorf("frame error %v, want none", frameErr)
			case tt.frameErr != "" && (frameErr == nil || !strings.Contains(frameErr.Error(), tt.frameErr)):
				t.Errorf("frame error %v, want one naming %q", frameErr, tt.frameErr)
			}
			switch {
			case tt.lostNamed == "" && lost != nil:
				t.Errorf("lost %v, want none", lost)
			case tt.lostNamed != "" && (lost == nil || !strings.Contains(lost.Error(), tt.lostNamed)):
				t.Errorf("lost %v, want it to name %q", lost, tt.lostNamed)
			}
			// Each message counts once: the report holds one Started, Done and result per execution.
			report := reportOf(decoded, frameErr, keys)
			if len(report.Results) != len(tt.want)-countOf(tt.want, ids[0])-countOf(tt.want, ids[4]) {
				t.Errorf("report holds %d results, want each whole result once", len(report.Results))
			}
		})
	}
}

func countOf(ids []string, id string) int {
	n := 0
	for _, x := range ids {
		if x == id {
			n++
		}
	}
	return n
}

// A frame whose copy at the end of the source fails authentication is a forgery, not a cut: it
// stays a frame error even at a switch-over.
func TestMergeFramesKeepsForgeriesAtTheSwitchOver(t *testing.T) {
	p, ids, keys := migratedRun(t)
	forged := bytes.Buffer{}
	emit := runner.FrameEmitter(&forged, []byte("not-the-token"), 1, "s0")
	for _, m := range runOf("demo-vm-1")[:3] { // the third message has the ID of ids[2]
		forged.Reset()
		if err := emit(m); err != nil {
			t.Fatal(err)
		}
	}
	_, frameErr, lost := mergeFrames([]podFrames{
		scanOf(keys, "src", p[0], p[1], forged.Bytes()),
		scanOf(keys, "dst", p[3], p[4]),
	}, keys.tokenFor)
	if frameErr == nil || !strings.Contains(frameErr.Error(), "checksum mismatch") || lost != nil {
		t.Fatalf("frame error %v, lost %v; want the forged frame %s as a checksum mismatch and nothing lost", frameErr, lost, ids[2])
	}
}

// Protects the forgery defence across migrations: only the VMI's first pod and the pods KubeVirt
// named in its migration state are read, in the order the VMI moved through them.
func TestLauncherChainFollowsKubeVirtsMigrations(t *testing.T) {
	t0 := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	pod := func(name string, at time.Duration) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(t0.Add(at))}}
	}
	// Oldest first, as pickLogPods sorts them; the target ties with the first pod on time.
	first, target, forged, second := pod("virt-launcher-b", 0), pod("virt-launcher-a", 0), pod("virt-launcher-f", time.Second), pod("virt-launcher-c", time.Minute)
	own := []*corev1.Pod{target, first, forged, second}
	vmi := &kubevirtv1.VirtualMachineInstance{}
	vmi.Status.MigrationState = &kubevirtv1.VirtualMachineInstanceMigrationState{SourcePod: "virt-launcher-a", TargetPod: "virt-launcher-c", Completed: true}
	chain, skipped := launcherChain(own, migrationPods(vmi, []podMove{{Source: "virt-launcher-b", Target: "virt-launcher-a"}}))
	var got []string
	for _, p := range chain {
		got = append(got, p.Name)
	}
	if strings.Join(got, ",") != "virt-launcher-b,virt-launcher-a,virt-launcher-c" || strings.Join(skipped, ",") != "virt-launcher-f" {
		t.Fatalf("chain %v, skipped %v; want b, a, c read in that order and the forged f skipped", got, skipped)
	}
	// The target of a migration that failed, or that is still copying, never ran the guest: not read.
	for _, ms := range []kubevirtv1.VirtualMachineInstanceMigrationState{
		{SourcePod: "virt-launcher-b", TargetPod: "virt-launcher-c", Completed: true, Failed: true},
		{SourcePod: "virt-launcher-b", TargetPod: "virt-launcher-c", Mode: kubevirtv1.MigrationPreCopy},
	} {
		vmi.Status.MigrationState = &ms
		chain, _ = launcherChain([]*corev1.Pod{first, second}, migrationPods(vmi, nil))
		if len(chain) != 1 || chain[0] != first {
			t.Errorf("migration state %+v: chain %v, want the first pod alone", ms, chain)
		}
	}
	// A post-copy migration runs the guest in its target before it completes: read.
	vmi.Status.MigrationState = &kubevirtv1.VirtualMachineInstanceMigrationState{SourcePod: "virt-launcher-b", TargetPod: "virt-launcher-c", Mode: kubevirtv1.MigrationPostCopy}
	if chain, _ = launcherChain([]*corev1.Pod{first, second}, migrationPods(vmi, nil)); len(chain) != 2 {
		t.Errorf("post-copy: chain %v, want the first pod and the target", chain)
	}
	// No migration: the oldest pod alone.
	chain, skipped = launcherChain([]*corev1.Pod{first, forged}, migrationPods(&kubevirtv1.VirtualMachineInstance{}, nil))
	if len(chain) != 1 || chain[0] != first || len(skipped) != 1 {
		t.Fatalf("without a migration: chain %v, skipped %v; want the first pod alone", chain, skipped)
	}
}

// Protects the migration budget: a VMI that moved through more than maxLauncherPods launcher pods
// fails the run with the cause, before any log is read (the reads must fit in one reconcile).
func TestLauncherPodsPastTheBudgetAreNamed(t *testing.T) {
	var own []*corev1.Pod
	var moves []podMove
	for i := range maxLauncherPods + 1 {
		own = append(own, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("virt-launcher-%d", i),
			CreationTimestamp: metav1.NewTime(time.Date(2026, 11, 29, 10, i, 0, 0, time.UTC))}})
		if i > 0 {
			moves = append(moves, podMove{Source: own[i-1].Name, Target: own[i].Name})
		}
	}
	vmi := &kubevirtv1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Name: "r-master"}}
	r := &SuiteReconciler{} // no log reader: reading a log would panic
	report, _, err := r.readLauncherPods(context.Background(), vmi, own, moves, "guest-console-log", frameKeys{}, true)
	if err != nil || report.LogErr == nil || !strings.Contains(report.LogErr.Error(), "VMI r-master moved through 11 launcher pods") ||
		!strings.Contains(report.LogErr.Error(), "reads the logs of at most 10") ||
		!strings.Contains(report.LogErr.Error(), "migrate a VM run's VMIs at most 9 times") {
		t.Fatalf("report %+v, err %v; want the budget named as the run's log error", report, err)
	}
}
