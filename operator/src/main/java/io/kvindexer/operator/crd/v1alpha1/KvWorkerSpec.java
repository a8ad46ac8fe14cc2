package io.kvindexer.operator.crd.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;
import io.fabric8.kubernetes.api.model.LabelSelector;

/**
 * Desired state of a KvWorker. Field initialisers repeat the schema defaults (see {@link KvIndexerSpec}); fields the
 * operator does not know are kept and reported ({@link UnknownFields}).
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class KvWorkerSpec extends UnknownFields {
    /**
     * The most characters (code points, as Kubernetes counts a maxLength) of a model name or tenant the indexer
     * registers (its {@code Registration.MAX_NAME}): a longer one is refused by every replica.
     */
    public static final int NAME_MAX = 256;

    /** No control characters (U+0000-U+001F, U+007F-U+009F), which the indexer refuses in a name. */
    public static final String NAME_PATTERN = "^[^\\x00-\\x1f\\x7f-\\x9f]*$";

    @JsonPropertyDescription("Name of the KvIndexer (same namespace) whose replicas the engines are registered with.")
    @Required
    @Size(min = 1)
    private String indexerRef;

    @JsonPropertyDescription("Label selector over the engine pods of the KvWorker's namespace; not empty (that would"
            + " select every pod, the indexer replicas among them).")
    @Required
    private LabelSelector selector;

    @JsonPropertyDescription(
            "Model the engines serve (model_name of /register): at most 256 characters, no control characters.")
    @Required
    @Size(min = 1, max = NAME_MAX)
    @Pattern(NAME_PATTERN)
    private String modelName;

    @JsonPropertyDescription(
            "Tenant of the registrations (tenant_id of /register): at most 256 characters, no control characters.")
    @Default("default")
    @Size(min = 1, max = NAME_MAX)
    @Pattern(NAME_PATTERN)
    private String tenantId = "default";

    @JsonPropertyDescription("KV block size of the engines, in tokens.")
    @Required
    @Min(1)
    private Integer blockSize;

    @JsonPropertyDescription("ZMQ PUB port of data-parallel rank 0; rank r publishes on zmqPort + r.")
    @Default("5557")
    @Min(1)
    @Max(65535)
    private Integer zmqPort = 5557;

    @JsonPropertyDescription("ZMQ ROUTER (replay) port of rank 0; rank r replays on replayPort + r. Unset: no replay.")
    @Min(1)
    @Max(65535)
    private Integer replayPort;

    @JsonPropertyDescription("Data-parallel ranks per engine pod.")
    @Default("1")
    @Min(1)
    @Max(1024)
    private Integer dataParallelSize = 1;

    @JsonPropertyDescription(
            "Pod annotation holding the instance id (unsigned 64-bit decimal). Unset: a stable hash of namespace/name.")
    private String instanceIdAnnotation;

    @JsonPropertyDescription("Seconds a registered engine pod may be not Ready (its Ready condition's last transition)"
            + " before it is unregistered: a shorter readiness flap keeps its registrations. 0: unregistered at once.")
    @Default("60")
    @Min(0)
    private Integer unregisterAfterSeconds = 60;

    public String getIndexerRef() {
        return indexerRef;
    }

    public void setIndexerRef(String indexerRef) {
        this.indexerRef = indexerRef;
    }

    public LabelSelector getSelector() {
        return selector;
    }

    public void setSelector(LabelSelector selector) {
        this.selector = selector;
    }

    public String getModelName() {
        return modelName;
    }

    public void setModelName(String modelName) {
        this.modelName = modelName;
    }

    public String getTenantId() {
        return tenantId;
    }

    public void setTenantId(String tenantId) {
        this.tenantId = tenantId;
    }

    public Integer getBlockSize() {
        return blockSize;
    }

    public void setBlockSize(Integer blockSize) {
        this.blockSize = blockSize;
    }

    public Integer getZmqPort() {
        return zmqPort;
    }

    public void setZmqPort(Integer zmqPort) {
        this.zmqPort = zmqPort;
    }

    public Integer getReplayPort() {
        return replayPort;
    }

    public void setReplayPort(Integer replayPort) {
        this.replayPort = replayPort;
    }

    public Integer getDataParallelSize() {
        return dataParallelSize;
    }

    public void setDataParallelSize(Integer dataParallelSize) {
        this.dataParallelSize = dataParallelSize;
    }

    public String getInstanceIdAnnotation() {
        return instanceIdAnnotation;
    }

    public void setInstanceIdAnnotation(String instanceIdAnnotation) {
        this.instanceIdAnnotation = instanceIdAnnotation;
    }

    public Integer getUnregisterAfterSeconds() {
        return unregisterAfterSeconds;
    }

    public void setUnregisterAfterSeconds(Integer unregisterAfterSeconds) {
        this.unregisterAfterSeconds = unregisterAfterSeconds;
    }
}
