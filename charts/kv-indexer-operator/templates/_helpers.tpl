{{/* Chart name, overridable. */}}
{{- define "kvio.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Resource name prefix: fullnameOverride, else "<release>-<chart>" (just the release when it contains the chart name). */}}
{{- define "kvio.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/* Kubernetes recommended labels. */}}
{{- define "kvio.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "kvio.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/component: operator
app.kubernetes.io/part-of: kv-indexer
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{/*
Labels of the `helm test` pod: the release's, but not the operator's selector labels nor its component, so that
neither the operator's Deployment, Service and NetworkPolicy nor the indexers' NetworkPolicy (which lets in pods of
component "operator") take it for an operator pod.
*/}}
{{- define "kvio.testLabels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/component: test
app.kubernetes.io/part-of: kv-indexer
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{/* Labels that select the operator pods (stable across upgrades). */}}
{{- define "kvio.selectorLabels" -}}
app.kubernetes.io/name: {{ include "kvio.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "kvio.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "kvio.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- required "serviceAccount.name is required when serviceAccount.create=false" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "kvio.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}


{{/* Invariants that a JSON schema cannot say clearly; rendered (as nothing) by the Deployment. */}}
{{- define "kvio.validate" -}}
{{- if and (gt (int .Values.replicas) 1) (not .Values.leaderElection.enabled) }}
{{- fail "replicas > 1 requires leaderElection.enabled=true: two operators without a Lease would both reconcile" }}
{{- end }}
{{- if and .Values.metrics.serviceMonitor.enabled (not .Values.metrics.service.enabled) }}
{{- fail "metrics.serviceMonitor.enabled=true requires metrics.service.enabled=true (the ServiceMonitor selects that Service)" }}
{{- end }}
{{- if and .Values.example.enabled .Values.watchNamespaces (not (has .Release.Namespace .Values.watchNamespaces)) }}
{{- fail (printf "example.enabled=true creates the example in namespace %s, which is not in watchNamespaces %v" .Release.Namespace .Values.watchNamespaces) }}
{{- end }}
{{- end }}

{{/*
The rules the operator needs in every watched namespace (ClusterRole when watching all, Role per namespace otherwise).
Keep in sync with docs/kubernetes.md, "RBAC: exactly what the operator is granted", and packaging-tests
HelmChartTest.
*/}}
{{- define "kvio.watchRules" -}}
# our resources: the operator's informers
- apiGroups: ["kvindexer.io"]
  resources: ["kvindexers"]
  verbs: ["get", "list", "watch"]
# KvWorker: also patched to add / remove its finalizer (unregister engines on delete)
- apiGroups: ["kvindexer.io"]
  resources: ["kvworkers"]
  verbs: ["get", "list", "watch", "patch"]
# status: replaced on the status subresource with optimistic locking (update); conditions of a failed reconcile
# are a JSON patch (patch). Server-side apply is off
- apiGroups: ["kvindexer.io"]
  resources: ["kvindexers/status", "kvworkers/status"]
  verbs: ["update", "patch"]
# owned objects carry ownerReferences with blockOwnerDeletion (OwnerReferencesPermissionEnforcement)
- apiGroups: ["kvindexer.io"]
  resources: ["kvindexers/finalizers"]
  verbs: ["update"]
# engine pods and indexer replica pods: read only
- apiGroups: [""]
  resources: ["pods"]
  verbs: ["get", "list", "watch"]
# what a KvIndexer owns; deleted by garbage collection through ownerReferences
- apiGroups: ["apps"]
  resources: ["statefulsets"]
  verbs: ["get", "list", "watch", "create", "update"]
- apiGroups: [""]
  resources: ["services"]
  verbs: ["get", "list", "watch", "create", "update"]
# spec.persistence.size grown: the replicas' volume claims (made by the StatefulSet) are asked for the new size;
# read by name only, never listed
- apiGroups: [""]
  resources: ["persistentvolumeclaims"]
  verbs: ["get", "patch"]
# spec.autoscaling: the operator's HorizontalPodAutoscaler, deleted when the field is removed
- apiGroups: ["autoscaling"]
  resources: ["horizontalpodautoscalers"]
  verbs: ["get", "list", "watch", "create", "update", "delete"]
# the PodDisruptionBudget is also deleted by the operator when replicas drop to 1
- apiGroups: ["policy"]
  resources: ["poddisruptionbudgets"]
  verbs: ["get", "list", "watch", "create", "update", "delete"]
# the optional ServiceMonitor of a KvIndexer (spec.serviceMonitor): a dependent with its own informer (only where
# the CRD is installed), created, updated, deleted when switched off
- apiGroups: ["monitoring.coreos.com"]
  resources: ["servicemonitors"]
  verbs: ["get", "list", "watch", "create", "update", "delete"]
# Kubernetes Events on our resources (registrations, failures)
- apiGroups: [""]
  resources: ["events"]
  verbs: ["create"]
# secure by default: each KvIndexer's token and certificate Secrets (owned, deleted when switched off) and the
# namespace's CA Secret kv-indexer-ca; read by name only, never listed
- apiGroups: [""]
  resources: ["secrets"]
  verbs: ["get", "create", "update", "delete"]
# each KvIndexer's NetworkPolicy: a dependent with its own informer, deleted when switched off
- apiGroups: ["networking.k8s.io"]
  resources: ["networkpolicies"]
  verbs: ["get", "list", "watch", "create", "update", "delete"]
{{- if .Values.certManager.enabled }}
# spec.security.tls.issuerRef: the KvIndexer's cert-manager Certificate (owned, deleted when switched off)
- apiGroups: ["cert-manager.io"]
  resources: ["certificates"]
  verbs: ["get", "create", "update", "delete"]
{{- end }}
{{- end }}
