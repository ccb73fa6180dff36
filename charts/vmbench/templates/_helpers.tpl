{{/* The release's name prefix: the release name, with the chart name added unless it holds it. */}}
{{- define "vmbench.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 48 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 48 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{/* Labels that select the manager's pods; they never change between upgrades. */}}
{{- define "vmbench.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: manager
{{- end -}}

{{/* Labels on every object of the release. */}}
{{- define "vmbench.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{- define "vmbench.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (printf "%s-manager" (include "vmbench.fullname" .)) .Values.serviceAccount.name -}}
{{- else -}}
{{- required "serviceAccount.name is required when serviceAccount.create is false" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* The tag of vmbench's images unless an individual value names one: global.tag, else appVersion. */}}
{{- define "vmbench.tag" -}}
{{- default .Chart.AppVersion (dig "tag" "" (.Values.global | default dict)) -}}
{{- end -}}

{{/* The repository of one of vmbench's images (argument: list of the root context and the image's
name: manager, runner or vm-disk): <global.registry>/vmbench-<name>, as `make push` names them,
or the local vmbench/<name> that hack/images builds. */}}
{{- define "vmbench.repository" -}}
{{- $root := index . 0 -}}
{{- $name := index . 1 -}}
{{- $registry := dig "registry" "" ($root.Values.global | default dict) | trimSuffix "/" -}}
{{- if $registry -}}
{{- printf "%s/vmbench-%s" $registry $name -}}
{{- else -}}
{{- printf "vmbench/%s" $name -}}
{{- end -}}
{{- end -}}

{{/* The manager image: image.repository and image.tag where set, else from global. */}}
{{- define "vmbench.image" -}}
{{- $repository := .Values.image.repository | default (include "vmbench.repository" (list . "manager")) -}}
{{- printf "%s:%s" $repository (.Values.image.tag | default (include "vmbench.tag" .)) -}}
{{- end -}}

{{/* The runner image: runnerImage where set, else from global. */}}
{{- define "vmbench.runnerImage" -}}
{{- .Values.runnerImage | default (printf "%s:%s" (include "vmbench.repository" (list . "runner")) (include "vmbench.tag" .)) -}}
{{- end -}}

{{/* The VM disk image: vmDiskImage where set, else from global. */}}
{{- define "vmbench.vmDiskImage" -}}
{{- .Values.vmDiskImage | default (printf "%s:%s" (include "vmbench.repository" (list . "vm-disk")) (include "vmbench.tag" .)) -}}
{{- end -}}

{{/* The Secret of the master key, in the release namespace; the manager creates it on first start. */}}
{{- define "vmbench.masterKeySecret" -}}
{{- printf "%s-master-key" (include "vmbench.fullname" .) -}}
{{- end -}}

{{/* The kubernetes.io/tls Secret the metrics are served with: metrics.tls.secretName, else
<fullname>-metrics-tls when cert-manager issues it, else none (a self-signed certificate). */}}
{{- define "vmbench.metricsTLSSecret" -}}
{{- if .Values.metrics.tls.secretName -}}
{{- .Values.metrics.tls.secretName -}}
{{- else if .Values.metrics.tls.certManager.enabled -}}
{{- printf "%s-metrics-tls" (include "vmbench.fullname" .) -}}
{{- end -}}
{{- end -}}

{{/* The name scrapers verify the metrics certificate for: the metrics Service's. */}}
{{- define "vmbench.metricsServerName" -}}
{{- printf "%s-metrics.%s.svc" (include "vmbench.fullname" .) .Release.Namespace -}}
{{- end -}}
