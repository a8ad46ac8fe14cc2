package io.kvindexer.operator.crd.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Required;
import io.fabric8.kubernetes.api.model.ResourceRequirements;
import io.fabric8.kubernetes.model.annotation.SpecReplicas;

/**
 * Desired state of a KvIndexer. Field initialisers repeat the schema defaults: the API server applies the schema
 * defaults, but the operator must behave the same for objects that never went through it. Fields it does not know
 * are collected and reported ({@link UnknownFields}).
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class KvIndexerSpec extends UnknownFields {
    @JsonPropertyDescription("Number of indexer replicas (pods <name>-0 .. <name>-(n-1)); the scale subresource's"
            + " spec replicas (kubectl scale, a HorizontalPodAutoscaler).")
    @SpecReplicas
    @Default("2")
    @Min(1)
    @Max(64)
    private Integer replicas = 2;

    @JsonPropertyDescription("Container image of the indexer.")
    @Required
    @Pattern("^\\S+$")
    private String image;

    @JsonPropertyDescription("Image pull policy: Always, IfNotPresent or Never.")
    @Default("IfNotPresent")
    @Pattern("^(Always|IfNotPresent|Never)$")
    private String imagePullPolicy = "IfNotPresent";

    @JsonPropertyDescription("HTTP port of the indexer (--port).")
    @Default("8090")
    @Min(1)
    @Max(65535)
    private Integer port = 8090;

    @JsonPropertyDescription("Indexer writer threads (--threads); 0 or 1 = single-threaded.")
    @Default("4")
    @Min(0)
    @Max(1024)
    private Integer threads = 4;

    @JsonPropertyDescription("Shards per index (--index-shards), at most max(1, threads): more shards use more cores "
            + "for writes and more memory for blocks that workers of several shards share.")
    @Default("1")
    @Min(1)
    @Max(1024)
    private Integer indexShards = 1;

    @JsonPropertyDescription(
            "Registered workers a replica waits for before serving (DYN_ROUTER_MIN_INITIAL_WORKERS); 0 disables.")
    @Default("0")
    @Min(0)
    private Integer minInitialWorkers = 0;

    @JsonPropertyDescription("Time to live per storage tier (--block-ttl): a block its engine does not store again"
            + " within it is removed from the index. For publishers that never send removals. Unset: no TTL.")
    private BlockTtl blockTtl;

    @JsonPropertyDescription("Blocks one worker (instance, dp rank) may hold per tier (--max-blocks-per-worker);"
            + " above it its oldest-stored blocks on that tier are removed down to 90 %. 0: no cap.")
    @Default("0")
    @Min(0)
    private Long maxBlocksPerWorker = 0L;

    @JsonPropertyDescription("Write one JSON record per HTTP request (ts, trace_id, method, path, model, status,"
            + " duration_ms: Dynamo's --access-log) to the indexer container's stdout, among its log lines.")
    @Default("false")
    private Boolean accessLog = false;

    @JsonPropertyDescription("Compute resources of the indexer container.")
    private ResourceRequirements resources;

    @JsonPropertyDescription("Labels, annotations, scheduling settings and security contexts for the indexer pods.")
    private PodTemplateOverrides podTemplate;

    @JsonPropertyDescription("Seconds an unregistered worker's blocks are kept, hidden, for its comeback at the same"
            + " endpoint (--unregister-grace): a readiness flap or a changed replay endpoint does not cost the engine its"
            + " index. 0: dropped at once, as Dynamo does.")
    @Default("120")
    @Min(0)
    private Integer unregisterGraceSeconds = 120;

    @JsonPropertyDescription("Seconds a replica goes on answering after Kubernetes asks it to stop"
            + " (--shutdown-delay): /ready answers 503 and each answer closes its connection, so the Service and the"
            + " routers move to the other replicas before it stops (requests sent meanwhile are answered). 0: stops"
            + " at once. Above 5, the pods' termination grace period grows with it.")
    @Default("5")
    @Min(0)
    @Max(300)
    private Integer shutdownDelaySeconds = 5;

    @JsonPropertyDescription("A volume per replica for its snapshots, so a replica with no peer left comes back with"
            + " its index. Set when the KvIndexer is created: a StatefulSet's volume claims cannot change later.")
    private Persistence persistence;

    @JsonPropertyDescription("Create a Prometheus Operator ServiceMonitor for the replicas' /metrics.")
    @Default("false")
    private Boolean serviceMonitor = false;

    @JsonPropertyDescription("Let a HorizontalPodAutoscaler (owned by the operator) set replicas from the replicas'"
            + " CPU use; removing this field removes the autoscaler.")
    private Autoscaling autoscaling;

    @JsonPropertyDescription("TLS and the bearer token of the replicas' HTTP API; both on when absent.")
    private Security security;

    @JsonPropertyDescription("The replicas' NetworkPolicy; on when absent.")
    private NetworkPolicySettings networkPolicy;

    public Security getSecurity() {
        return security;
    }

    public void setSecurity(Security security) {
        this.security = security;
    }

    public NetworkPolicySettings getNetworkPolicy() {
        return networkPolicy;
    }

    public void setNetworkPolicy(NetworkPolicySettings networkPolicy) {
        this.networkPolicy = networkPolicy;
    }

    public Autoscaling getAutoscaling() {
        return autoscaling;
    }

    public void setAutoscaling(Autoscaling autoscaling) {
        this.autoscaling = autoscaling;
    }

    public Integer getReplicas() {
        return replicas;
    }

    public void setReplicas(Integer replicas) {
        this.replicas = replicas;
    }

    public String getImage() {
        return image;
    }

    public void setImage(String image) {
        this.image = image;
    }

    public String getImagePullPolicy() {
        return imagePullPolicy;
    }

    public void setImagePullPolicy(String imagePullPolicy) {
        this.imagePullPolicy = imagePullPolicy;
    }

    public Integer getPort() {
        return port;
    }

    public void setPort(Integer port) {
        this.port = port;
    }

    public Integer getThreads() {
        return threads;
    }

    public void setThreads(Integer threads) {
        this.threads = threads;
    }

    public Integer getIndexShards() {
        return indexShards;
    }

    public void setIndexShards(Integer indexShards) {
        this.indexShards = indexShards;
    }

    public Integer getMinInitialWorkers() {
        return minInitialWorkers;
    }

    public void setMinInitialWorkers(Integer minInitialWorkers) {
        this.minInitialWorkers = minInitialWorkers;
    }

    public BlockTtl getBlockTtl() {
        return blockTtl;
    }

    public void setBlockTtl(BlockTtl blockTtl) {
        this.blockTtl = blockTtl;
    }

    public Long getMaxBlocksPerWorker() {
        return maxBlocksPerWorker;
    }

    public void setMaxBlocksPerWorker(Long maxBlocksPerWorker) {
        this.maxBlocksPerWorker = maxBlocksPerWorker;
    }

    public Boolean getAccessLog() {
        return accessLog;
    }

    public void setAccessLog(Boolean accessLog) {
        this.accessLog = accessLog;
    }

    public ResourceRequirements getResources() {
        return resources;
    }

    public void setResources(ResourceRequirements resources) {
        this.resources = resources;
    }

    public PodTemplateOverrides getPodTemplate() {
        return podTemplate;
    }

    public void setPodTemplate(PodTemplateOverrides podTemplate) {
        this.podTemplate = podTemplate;
    }

    public Boolean getServiceMonitor() {
        return serviceMonitor;
    }

    public void setServiceMonitor(Boolean serviceMonitor) {
        this.serviceMonitor = serviceMonitor;
    }

    public Integer getUnregisterGraceSeconds() {
        return unregisterGraceSeconds;
    }

    public void setUnregisterGraceSeconds(Integer unregisterGraceSeconds) {
        this.unregisterGraceSeconds = unregisterGraceSeconds;
    }

    public Integer getShutdownDelaySeconds() {
        return shutdownDelaySeconds;
    }

    public void setShutdownDelaySeconds(Integer shutdownDelaySeconds) {
        this.shutdownDelaySeconds = shutdownDelaySeconds;
    }

    public Persistence getPersistence() {
        return persistence;
    }

    public void setPersistence(Persistence persistence) {
        this.persistence = persistence;
    }
}
