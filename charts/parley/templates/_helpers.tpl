{{/* The release's base name. */}}
{{- define "parley.fullname" -}}
{{- if contains .Chart.Name .Release.Name }}{{ .Release.Name | trunc 50 | trimSuffix "-" }}{{ else }}{{ printf "%s-%s" .Release.Name .Chart.Name | trunc 50 | trimSuffix "-" }}{{ end }}
{{- end }}

{{/* Labels of every object. */}}
{{- define "parley.labels" -}}
app.kubernetes.io/name: parley
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end }}

{{/* Labels that select the operator's pods. */}}
{{- define "parley.selectorLabels" -}}
app.kubernetes.io/name: parley
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: operator
{{- end }}

{{/* The image of the operator and of the runtimes it deploys. */}}
{{- define "parley.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end }}

{{/* The namespaces a namespaced install watches, comma-separated: watchNamespaces, the release's namespace and
the runtimes' target namespaces. */}}
{{- define "parley.watchNamespaces" -}}
{{ concat .Values.watchNamespaces (list .Release.Namespace .Values.runtime.namespace) .Values.runtimeNamespaces | compact | uniq | join "," }}
{{- end }}
