package io.kvindexer.indexer.registry;

import java.util.regex.Pattern;

/**
 * One {@code /register} request (or {@code --workers} entry) after JSON decoding.
 *
 * @param instanceId     u64 as a raw 64-bit pattern
 * @param replayEndpoint null when the engine has no replay ROUTER
 * @param podName        the engine's Kubernetes pod, so a gateway can map an instance id back to it; null = unknown
 */
public record Registration(
        long instanceId,
        String endpoint,
        String modelName,
        String tenantId,
        int blockSize,
        int dpRank,
        String replayEndpoint,
        String podName) {

    /** Kubernetes' limit for a pod name (a DNS subdomain, RFC 1123). */
    public static final int MAX_POD_NAME = 253;

    private static final Pattern DNS_SUBDOMAIN = Pattern.compile("[a-z0-9]([-a-z0-9.]*[a-z0-9])?");

    public Registration {
        String problem = podNameProblem(podName);
        if (problem != null) {
            throw new IllegalArgumentException(problem); // the HTTP layer checks first and answers 400
        }
    }

    /** Why {@code podName} is not a usable pod name; null when it is valid or absent. */
    public static String podNameProblem(String podName) {
        if (podName == null) {
            return null;
        }
        if (podName.length() > MAX_POD_NAME) {
            return "invalid pod_name: " + podName.length() + " characters; the limit is " + MAX_POD_NAME;
        }
        if (!DNS_SUBDOMAIN.matcher(podName).matches()) {
            return "invalid pod_name `" + podName + "`: a Kubernetes pod name has lowercase letters, digits, `-` and"
                    + " `.`, and starts and ends with a letter or digit";
        }
        return null;
    }
}
