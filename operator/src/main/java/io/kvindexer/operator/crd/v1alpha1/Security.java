package io.kvindexer.operator.crd.v1alpha1;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Required;

/**
 * {@code spec.security}: TLS on the replicas' HTTP port and the bearer token of their control endpoints. Both are on
 * when the field (or either part) is absent; each is turned off only by an explicit {@code enabled: false}.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
@JsonIgnoreProperties(ignoreUnknown = true)
public record Security(
        @JsonPropertyDescription("HTTPS on the HTTP port, with a certificate for the KvIndexer's Service names.")
        Tls tls,

        @JsonPropertyDescription("A bearer token, generated into the Secret <name>-auth (kv-indexer-token for a"
                + " KvIndexer named kv-indexer: kv-indexer-auth is the namespace-wide Secret of earlier versions),"
                + " on the control endpoints.")
        Auth auth) {

    /** TLS of the replicas. */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    @JsonIgnoreProperties(ignoreUnknown = true)
    public record Tls(
            @JsonPropertyDescription("false serves plain HTTP; absent or true serves HTTPS.")
            Boolean enabled,

            @JsonPropertyDescription("A cert-manager issuer for the certificate (used when cert-manager's CRDs are"
                    + " installed); absent: the operator's own CA (Secret kv-indexer-ca) issues it.")
            IssuerRef issuerRef) {}

    /** A cert-manager Issuer or ClusterIssuer. */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    @JsonIgnoreProperties(ignoreUnknown = true)
    public record IssuerRef(
            @JsonPropertyDescription("Name of the issuer.") @Required
            String name,

            @JsonPropertyDescription("Issuer (same namespace) or ClusterIssuer; default Issuer.")
            @Pattern("^(Issuer|ClusterIssuer)$")
            String kind,

            @JsonPropertyDescription("API group of the issuer; default cert-manager.io.")
            String group) {}

    /** The bearer token. */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    @JsonIgnoreProperties(ignoreUnknown = true)
    public record Auth(
            @JsonPropertyDescription("false leaves the control endpoints open; absent or true requires the token.")
            Boolean enabled) {}
}
