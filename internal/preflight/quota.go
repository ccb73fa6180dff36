package preflight

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Objects every suite keeps for its whole life, whichever run is going: the suite itself and its auth
// Secret.
var suiteObjects = map[corev1.ResourceName]int64{
	"count/benchmarksuites.vmbench.io": 1, corev1.ResourceSecrets: 1,
}

// runUsage is what one run of the platform counts against a ResourceQuota, under the quota's
// resource names.
func runUsage(p PlatformNeeds) map[corev1.ResourceName]resource.Quantity {
	out := map[corev1.ResourceName]resource.Quantity{}
	add := func(name corev1.ResourceName, q resource.Quantity) {
		sum := out[name]
		sum.Add(q)
		out[name] = sum
	}
	for _, m := range p.Members {
		for name, q := range m.Requests() {
			add(corev1.ResourceName("requests."+string(name)), q)
			if name == corev1.ResourceCPU || name == corev1.ResourceMemory || name == corev1.ResourceEphemeralStorage {
				add(name, q)
			}
		}
		for name, q := range m.Limits() {
			add(corev1.ResourceName("limits."+string(name)), q)
		}
	}
	objects := map[corev1.ResourceName]int64{}
	for name, n := range p.Objects {
		objects[name] += n
	}
	for name, n := range suiteObjects {
		objects[name] += n
	}
	for name, n := range objects {
		q := *resource.NewQuantity(n, resource.DecimalSI)
		if name == corev1.ResourceRequestsStorage {
			q = *resource.NewQuantity(n, resource.BinarySI)
		}
		add(name, q)
		// The object count quotas have a long and a short name: pods and count/pods.
		if !strings.HasPrefix(string(name), "count/") && name != corev1.ResourceRequestsStorage {
			add(corev1.ResourceName("count/"+string(name)), q)
		}
	}
	return out
}

// unlimitedMembers names the resources that some member of the platform sets no limit for.
func unlimitedMembers(p PlatformNeeds) []corev1.ResourceName {
	var out []corev1.ResourceName
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		for _, m := range p.Members {
			if _, ok := m.Limits()[name]; !ok {
				out = append(out, name)
				break
			}
		}
	}
	return out
}

// quotaApplies reports whether the quota's scopes select the run's pods: they are neither
// terminating (no activeDeadlineSeconds) nor BestEffort, and have no priority class.
func quotaApplies(q corev1.ResourceQuota) bool {
	for _, s := range q.Spec.Scopes {
		if s == corev1.ResourceQuotaScopeTerminating || s == corev1.ResourceQuotaScopeBestEffort || s == corev1.ResourceQuotaScopePriorityClass {
			return false
		}
	}
	if sel := q.Spec.ScopeSelector; sel != nil {
		for _, req := range sel.MatchExpressions {
			switch req.ScopeName {
			case corev1.ResourceQuotaScopeTerminating, corev1.ResourceQuotaScopeBestEffort:
				return false
			case corev1.ResourceQuotaScopePriorityClass:
				if req.Operator == corev1.ScopeSelectorOpIn || req.Operator == corev1.ScopeSelectorOpExists {
					return false
				}
			}
		}
	}
	return true
}

// CheckQuotas compares one run of every platform with each ResourceQuota of the namespace: a run
// that needs more than the quota's hard limit can never start (fail), one that needs more than is
// left now waits for others to finish (warn). Runs of a suite follow one another, so the largest
// platform's run counts.
func CheckQuotas(needs Needs, quotas []corev1.ResourceQuota, quotaErr error, limitRanges []corev1.LimitRange) []Check {
	if quotaErr != nil {
		return []Check{warn("quota", "cannot read the namespace's ResourceQuotas: "+firstLine(quotaErr), "grant list on resourcequotas to check them")}
	}
	if len(quotas) == 0 {
		return []Check{pass("quota", fmt.Sprintf("no ResourceQuota in namespace %q", needs.Namespace))}
	}
	var out []Check
	for _, q := range quotas {
		name := "quota/" + q.Name
		if !quotaApplies(q) {
			out = append(out, skip(name, "its scopes do not select the suite's pods"))
			continue
		}
		var over, short, room, missingLimits []string
		result := Pass
		for _, p := range needs.Platforms {
			usage := runUsage(p)
			for _, res := range sortedResourceNames(q.Spec.Hard) {
				hard := q.Spec.Hard[res]
				need, known := usage[res]
				if !known {
					if strings.HasPrefix(string(res), "limits.") {
						// A member without that limit is refused by the quota unless a LimitRange
						// gives it a default.
						base := corev1.ResourceName(strings.TrimPrefix(string(res), "limits."))
						for _, r := range unlimitedMembers(p) {
							if r == base && !defaultsLimit(limitRanges, base) {
								missingLimits = append(missingLimits, fmt.Sprintf("%s (platform %s sets no %s limit on its pods)", res, p.Platform.Name, base))
							}
						}
					}
					continue
				}
				used := q.Status.Used[res]
				free := hard.DeepCopy()
				free.Sub(used)
				figures := fmt.Sprintf("%s: platform %s needs %s, hard %s, used %s", res, p.Platform.Name,
					quantityText(string(res), need), quantityText(string(res), hard), quantityText(string(res), used))
				switch {
				case need.Cmp(hard) > 0:
					over = append(over, figures)
				case need.Cmp(free) > 0:
					short = append(short, figures)
				default:
					room = append(room, fmt.Sprintf("%s %s of %s free", res, quantityText(string(res), need), quantityText(string(res), free)))
				}
			}
		}
		var detail []string
		action := ""
		if len(over) > 0 {
			result = Fail
			detail = append(detail, "above the hard limit: "+strings.Join(dedupe(over), "; "))
			action = "raise the quota or lower spec.cluster"
		}
		if len(missingLimits) > 0 {
			result = Fail
			detail = append(detail, "the quota needs limits the pods do not set: "+strings.Join(dedupe(missingLimits), "; "))
			action = strings.TrimPrefix(action+"; add a LimitRange with default limits, or drop those quota resources", "; ")
		}
		if len(short) > 0 {
			if result == Pass {
				result = Warn
				action = "runs wait until other workloads free the quota"
			}
			detail = append(detail, "more than is left now: "+strings.Join(dedupe(short), "; "))
		}
		if len(detail) == 0 {
			if len(room) == 0 {
				out = append(out, pass(name, "limits nothing the suite uses"))
				continue
			}
			out = append(out, pass(name, "room for one run: "+list(dedupe(room), 12)))
			continue
		}
		out = append(out, Check{Name: name, Result: result, Detail: strings.Join(detail, "; "), Action: action})
	}
	return out
}

func defaultsLimit(limitRanges []corev1.LimitRange, res corev1.ResourceName) bool {
	for _, lr := range limitRanges {
		for _, item := range lr.Spec.Limits {
			if item.Type == corev1.LimitTypeContainer {
				if _, ok := item.Default[res]; ok {
					return true
				}
			}
		}
	}
	return false
}

func sortedResourceNames(l corev1.ResourceList) []corev1.ResourceName {
	names := make([]corev1.ResourceName, 0, len(l))
	for n := range l {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool { return names[i] < names[j] })
	return names
}

// CheckLimitRanges applies each LimitRange of the namespace to the run's pods as the LimitRanger
// admission would: defaults fill in what a container does not set, then min, max and the
// limit/request ratio must hold, per container and per pod, and for the shared claim.
func CheckLimitRanges(needs Needs, limitRanges []corev1.LimitRange, lrErr error) []Check {
	if lrErr != nil {
		return []Check{warn("limitrange", "cannot read the namespace's LimitRanges: "+firstLine(lrErr), "grant list on limitranges to check them")}
	}
	if len(limitRanges) == 0 {
		return []Check{pass("limitrange", fmt.Sprintf("no LimitRange in namespace %q", needs.Namespace))}
	}
	var out []Check
	for _, lr := range limitRanges {
		name := "limitrange/" + lr.Name
		var problems []string
		estimated := false
		for _, p := range needs.Platforms {
			for _, m := range p.Members {
				containers := withDefaults(m.Containers, lr)
				for _, c := range containers {
					for _, msg := range limitProblems(corev1.LimitTypeContainer, c.Resources, lr) {
						problems = append(problems, fmt.Sprintf("platform %s, container %s: %s", p.Platform.Name, c.Name, msg))
						estimated = estimated || m.Estimated
					}
				}
				pod := corev1.ResourceRequirements{Requests: sumResources(containers, false), Limits: sumResources(containers, true)}
				for _, msg := range limitProblems(corev1.LimitTypePod, pod, lr) {
					problems = append(problems, fmt.Sprintf("platform %s, pod: %s", p.Platform.Name, msg))
					estimated = estimated || m.Estimated
				}
			}
		}
		if needs.Shared != nil && needs.Shared.Size != nil {
			claim := corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: *needs.Shared.Size}}
			for _, msg := range limitProblems(corev1.LimitTypePersistentVolumeClaim, claim, lr) {
				problems = append(problems, "shared claim: "+msg)
			}
		}
		if len(problems) == 0 {
			out = append(out, pass(name, "the run's pods are within its min, max and ratios"))
			continue
		}
		detail := strings.Join(dedupe(problems), "; ")
		if estimated {
			detail += " (VM pods estimated: KubeVirt adds its overhead to their memory)"
		}
		out = append(out, fail(name, detail, "change the LimitRange, or spec.cluster (cpu, memory, cpuRequest, memoryRequest)"))
	}
	return out
}

// withDefaults fills in the LimitRange's default requests and limits where a container sets none.
func withDefaults(containers []corev1.Container, lr corev1.LimitRange) []corev1.Container {
	out := make([]corev1.Container, len(containers))
	for i, c := range containers {
		c.Resources = *c.Resources.DeepCopy()
		for _, item := range lr.Spec.Limits {
			if item.Type != corev1.LimitTypeContainer {
				continue
			}
			if c.Resources.Limits == nil {
				c.Resources.Limits = corev1.ResourceList{}
			}
			if c.Resources.Requests == nil {
				c.Resources.Requests = corev1.ResourceList{}
			}
			for res, q := range item.Default {
				if _, ok := c.Resources.Limits[res]; !ok {
					c.Resources.Limits[res] = q
				}
			}
			for res, q := range item.DefaultRequest {
				if _, ok := c.Resources.Requests[res]; !ok {
					c.Resources.Requests[res] = q
				}
			}
		}
		out[i] = c
	}
	return out
}

func limitProblems(kind corev1.LimitType, r corev1.ResourceRequirements, lr corev1.LimitRange) []string {
	var out []string
	for _, item := range lr.Spec.Limits {
		if item.Type != kind {
			continue
		}
		for _, res := range sortedResourceNames(item.Min) {
			lowest := item.Min[res]
			if req, ok := r.Requests[res]; ok && req.Cmp(lowest) < 0 {
				out = append(out, fmt.Sprintf("%s request %s below the min %s", res, quantityText(string(res), req), quantityText(string(res), lowest)))
			}
			if lim, ok := r.Limits[res]; ok && lim.Cmp(lowest) < 0 {
				out = append(out, fmt.Sprintf("%s limit %s below the min %s", res, quantityText(string(res), lim), quantityText(string(res), lowest)))
			}
		}
		for _, res := range sortedResourceNames(item.Max) {
			highest := item.Max[res]
			lim, ok := r.Limits[res]
			if kind == corev1.LimitTypePersistentVolumeClaim {
				lim, ok = r.Requests[res]
			}
			switch {
			case !ok:
				out = append(out, fmt.Sprintf("%s has a max of %s and no limit is set", res, quantityText(string(res), highest)))
			case lim.Cmp(highest) > 0:
				out = append(out, fmt.Sprintf("%s %s above the max %s", res, quantityText(string(res), lim), quantityText(string(res), highest)))
			}
		}
		for _, res := range sortedResourceNames(item.MaxLimitRequestRatio) {
			ratio := item.MaxLimitRequestRatio[res]
			req, okReq := r.Requests[res]
			lim, okLim := r.Limits[res]
			if !okReq || !okLim || req.IsZero() {
				continue
			}
			if float64(lim.MilliValue())/float64(req.MilliValue()) > float64(ratio.MilliValue())/1000 {
				out = append(out, fmt.Sprintf("%s limit/request %s/%s above the max ratio %s", res,
					quantityText(string(res), lim), quantityText(string(res), req), ratio.String()))
			}
		}
		if kind == corev1.LimitTypeContainer {
			for _, res := range sortedResourceNames(r.Requests) {
				req := r.Requests[res]
				if lim, ok := r.Limits[res]; ok && req.Cmp(lim) > 0 {
					out = append(out, fmt.Sprintf("%s request %s above its limit %s (the LimitRange's default limit)", res,
						quantityText(string(res), req), quantityText(string(res), lim)))
				}
			}
		}
	}
	return out
}
