package platform

import (
	"fmt"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

// restrictedViolations lists what a pod spec does that Pod Security's restricted profile
// (https://kubernetes.io/docs/concepts/security/pod-security-standards/, version latest, which
// includes baseline) forbids. Each check is written from the standard's table, not from the
// admission plugin's code, so that the two can disagree only where the standard changes.
func restrictedViolations(pod corev1.PodSpec) []string {
	var v []string
	add := func(format string, args ...any) { v = append(v, fmt.Sprintf(format, args...)) }
	psc := pod.SecurityContext
	if psc == nil {
		psc = &corev1.PodSecurityContext{}
	}

	// Baseline.
	if pod.HostNetwork || pod.HostPID || pod.HostIPC {
		add("host namespaces: hostNetwork=%t hostPID=%t hostIPC=%t", pod.HostNetwork, pod.HostPID, pod.HostIPC)
	}
	if w := psc.WindowsOptions; w != nil && ptr.Deref(w.HostProcess, false) {
		add("pod: windowsOptions.hostProcess")
	}
	safeSysctls := []string{
		"kernel.shm_rmid_forced", "net.ipv4.ip_local_port_range", "net.ipv4.ip_unprivileged_port_start",
		"net.ipv4.tcp_syncookies", "net.ipv4.ping_group_range", "net.ipv4.ip_local_reserved_ports",
		"net.ipv4.tcp_keepalive_time", "net.ipv4.tcp_fin_timeout", "net.ipv4.tcp_keepalive_intvl",
		"net.ipv4.tcp_keepalive_probes", "net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem",
	}
	for _, s := range psc.Sysctls {
		if !slices.Contains(safeSysctls, s.Name) {
			add("sysctl %s is not a safe sysctl", s.Name)
		}
	}
	if sp := psc.SeccompProfile; sp != nil && sp.Type == corev1.SeccompProfileTypeUnconfined {
		add("pod: seccomp Unconfined")
	}
	if ap := psc.AppArmorProfile; ap != nil && ap.Type == corev1.AppArmorProfileTypeUnconfined {
		add("pod: appArmor Unconfined")
	}
	checkSELinux := func(who string, o *corev1.SELinuxOptions) {
		if o == nil {
			return
		}
		if !slices.Contains([]string{"", "container_t", "container_init_t", "container_kvm_t", "container_engine_t"}, o.Type) {
			add("%s: seLinuxOptions.type %s", who, o.Type)
		}
		if o.User != "" || o.Role != "" {
			add("%s: seLinuxOptions user or role set", who)
		}
	}
	checkSELinux("pod", psc.SELinuxOptions)

	// Restricted, pod level.
	allowedVolumes := func(v corev1.Volume) bool {
		s := v.VolumeSource
		return s.ConfigMap != nil || s.CSI != nil || s.DownwardAPI != nil || s.EmptyDir != nil || s.Ephemeral != nil ||
			s.PersistentVolumeClaim != nil || s.Projected != nil || s.Secret != nil
	}
	for _, vol := range pod.Volumes {
		if vol.HostPath != nil {
			add("volume %s: hostPath", vol.Name)
		} else if !allowedVolumes(vol) {
			add("volume %s: a type restricted does not allow", vol.Name)
		}
	}
	if psc.RunAsUser != nil && *psc.RunAsUser == 0 {
		add("pod: runAsUser 0")
	}
	podSeccomp := psc.SeccompProfile != nil &&
		(psc.SeccompProfile.Type == corev1.SeccompProfileTypeRuntimeDefault || psc.SeccompProfile.Type == corev1.SeccompProfileTypeLocalhost)

	containers := slices.Concat(pod.InitContainers, pod.Containers)
	for _, e := range pod.EphemeralContainers {
		containers = append(containers, corev1.Container(e.EphemeralContainerCommon))
	}
	for _, c := range containers {
		sc := c.SecurityContext
		if sc == nil {
			sc = &corev1.SecurityContext{}
		}
		// Baseline.
		if ptr.Deref(sc.Privileged, false) {
			add("%s: privileged", c.Name)
		}
		if w := sc.WindowsOptions; w != nil && ptr.Deref(w.HostProcess, false) {
			add("%s: windowsOptions.hostProcess", c.Name)
		}
		for _, p := range c.Ports {
			if p.HostPort != 0 {
				add("%s: hostPort %d", c.Name, p.HostPort)
			}
		}
		if sc.ProcMount != nil && *sc.ProcMount != corev1.DefaultProcMount {
			add("%s: procMount %s", c.Name, *sc.ProcMount)
		}
		if ap := sc.AppArmorProfile; ap != nil && ap.Type == corev1.AppArmorProfileTypeUnconfined {
			add("%s: appArmor Unconfined", c.Name)
		}
		checkSELinux(c.Name, sc.SELinuxOptions)

		// Restricted.
		if ptr.Deref(sc.AllowPrivilegeEscalation, true) {
			add("%s: allowPrivilegeEscalation is not false", c.Name)
		}
		if sc.RunAsNonRoot != nil && !*sc.RunAsNonRoot {
			add("%s: runAsNonRoot false", c.Name)
		} else if sc.RunAsNonRoot == nil && !ptr.Deref(psc.RunAsNonRoot, false) {
			add("%s: runAsNonRoot is set neither on the pod nor on the container", c.Name)
		}
		if sc.RunAsUser != nil && *sc.RunAsUser == 0 {
			add("%s: runAsUser 0", c.Name)
		}
		switch {
		case sc.SeccompProfile == nil && !podSeccomp:
			add("%s: no seccomp profile RuntimeDefault or Localhost on the pod or the container", c.Name)
		case sc.SeccompProfile != nil && sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault &&
			sc.SeccompProfile.Type != corev1.SeccompProfileTypeLocalhost:
			add("%s: seccomp %s", c.Name, sc.SeccompProfile.Type)
		}
		var capAdd, capDrop []corev1.Capability
		if sc.Capabilities != nil {
			capAdd, capDrop = sc.Capabilities.Add, sc.Capabilities.Drop
		}
		if !slices.Contains(capDrop, "ALL") {
			add("%s: capabilities do not drop ALL", c.Name)
		}
		for _, added := range capAdd {
			if added != "NET_BIND_SERVICE" {
				add("%s: adds capability %s", c.Name, added)
			}
		}
	}
	return v
}

// compliantPod is the smallest pod spec that restricted admits.
func compliantPod() corev1.PodSpec {
	return corev1.PodSpec{
		SecurityContext: &corev1.PodSecurityContext{
			RunAsNonRoot:   ptr.To(true),
			SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
		},
		Containers: []corev1.Container{{Name: "c", SecurityContext: &corev1.SecurityContext{
			AllowPrivilegeEscalation: ptr.To(false),
			Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		}}},
	}
}

// The checker finds each violation it is written for, so that its silence on vmbench's pods means
// something.
func TestRestrictedViolationsFindsEachViolation(t *testing.T) {
	if v := restrictedViolations(compliantPod()); len(v) != 0 {
		t.Fatalf("the compliant pod has violations: %v", v)
	}
	sc := func(p *corev1.PodSpec) *corev1.SecurityContext { return p.Containers[0].SecurityContext }
	for name, change := range map[string]func(p *corev1.PodSpec){
		"NET_RAW added, as the runner pods did": func(p *corev1.PodSpec) { sc(p).Capabilities.Add = []corev1.Capability{"NET_RAW"} },
		"nothing dropped":                       func(p *corev1.PodSpec) { sc(p).Capabilities = nil },
		"privilege escalation left unset":       func(p *corev1.PodSpec) { sc(p).AllowPrivilegeEscalation = nil },
		"privilege escalation allowed":          func(p *corev1.PodSpec) { sc(p).AllowPrivilegeEscalation = ptr.To(true) },
		"runAsNonRoot unset":                    func(p *corev1.PodSpec) { p.SecurityContext.RunAsNonRoot = nil },
		"a container runs as root":              func(p *corev1.PodSpec) { sc(p).RunAsNonRoot = ptr.To(false) },
		"runAsUser 0":                           func(p *corev1.PodSpec) { p.SecurityContext.RunAsUser = ptr.To[int64](0) },
		"no seccomp profile":                    func(p *corev1.PodSpec) { p.SecurityContext.SeccompProfile = nil },
		"a container Unconfined": func(p *corev1.PodSpec) {
			sc(p).SeccompProfile = &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeUnconfined}
		},
		"hostNetwork": func(p *corev1.PodSpec) { p.HostNetwork = true },
		"hostPID":     func(p *corev1.PodSpec) { p.HostPID = true },
		"hostIPC":     func(p *corev1.PodSpec) { p.HostIPC = true },
		"privileged":  func(p *corev1.PodSpec) { sc(p).Privileged = ptr.To(true) },
		"a hostPort": func(p *corev1.PodSpec) {
			p.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 2222, HostPort: 2222}}
		},
		"an unsafe sysctl": func(p *corev1.PodSpec) {
			p.SecurityContext.Sysctls = []corev1.Sysctl{{Name: "net.core.somaxconn", Value: "1024"}}
		},
		"a hostPath volume": func(p *corev1.PodSpec) {
			p.Volumes = []corev1.Volume{{Name: "h", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/"}}}}
		},
		"an NFS volume": func(p *corev1.PodSpec) {
			p.Volumes = []corev1.Volume{{Name: "n", VolumeSource: corev1.VolumeSource{NFS: &corev1.NFSVolumeSource{Server: "nfs", Path: "/"}}}}
		},
		"an init container with defaults": func(p *corev1.PodSpec) { p.InitContainers = []corev1.Container{{Name: "init"}} },
	} {
		t.Run(name, func(t *testing.T) {
			p := compliantPod()
			change(&p)
			if v := restrictedViolations(p); len(v) == 0 {
				t.Error("no violation found")
			}
		})
	}
	// What restricted allows.
	for name, change := range map[string]func(p *corev1.PodSpec){
		"NET_BIND_SERVICE added": func(p *corev1.PodSpec) { sc(p).Capabilities.Add = []corev1.Capability{"NET_BIND_SERVICE"} },
		"ping_group_range":       func(p *corev1.PodSpec) { p.SecurityContext.Sysctls = []corev1.Sysctl{pingGroupRange} },
		"a Localhost profile on the container only": func(p *corev1.PodSpec) {
			p.SecurityContext.SeccompProfile = nil
			sc(p).SeccompProfile = &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeLocalhost, LocalhostProfile: ptr.To("p.json")}
		},
		"runAsNonRoot on the container only": func(p *corev1.PodSpec) {
			p.SecurityContext.RunAsNonRoot = nil
			sc(p).RunAsNonRoot = ptr.To(true)
		},
	} {
		t.Run("allowed: "+name, func(t *testing.T) {
			p := compliantPod()
			change(&p)
			if v := restrictedViolations(p); len(v) != 0 {
				t.Errorf("violations: %v", v)
			}
		})
	}
}
