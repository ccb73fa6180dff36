package v1alpha1

// StartupPhase is one phase of a run's start that was recorded.
// +kubebuilder:object:generate=false
type StartupPhase struct {
	// Name is the phase's name in status: podsScheduled, vmiRunning, ...
	Name    string
	Seconds float64
}

// StartupPhaseNames are the phases of a run's start, in the order they happen, as status names
// them.
var StartupPhaseNames = []string{"podsScheduled", "sandboxesReady", "containersStarted", "vmiScheduled", "vmiRunning", "runnerReady"}

// Phases lists the phases of a run's start that were recorded, in the order they happen; none for
// a nil RunStartup.
func (s *RunStartup) Phases() []StartupPhase {
	if s == nil {
		return nil
	}
	var out []StartupPhase
	for i, v := range []*float64{s.PodsScheduled, s.SandboxesReady, s.ContainersStarted, s.VMIScheduled, s.VMIRunning, s.RunnerReady} {
		if v != nil {
			out = append(out, StartupPhase{Name: StartupPhaseNames[i], Seconds: *v})
		}
	}
	return out
}
