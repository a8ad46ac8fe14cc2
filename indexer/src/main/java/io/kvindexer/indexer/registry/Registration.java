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

    /**
     * The most characters (code points) a model name or tenant may have. Each name is a label value of two metric
     * series per index, a key of {@code /dump} and {@code /stats}, and goes into log lines: without a bound one
     * registration could make every scrape megabytes long. 256 is above any model id or path a platform uses.
     */
    public static final int MAX_NAME = 256;

    private static final Pattern DNS_SUBDOMAIN = Pattern.compile("[a-z0-9]([-a-z0-9.]*[a-z0-9])?");

    public Registration {
        String sizeProblem = blockSizeProblem(blockSize);
        if (sizeProblem != null) {
            throw new IllegalArgumentException("block_size: " + sizeProblem); // the HTTP layer and the CLI check first
        }
        String problem = podNameProblem(podName);
        if (problem != null) {
            throw new IllegalArgumentException(problem); // the HTTP layer checks first and answers 400
        }
    }

    /**
     * Why {@code blockSize} (a u32's bit pattern) cannot be an index's block size; null when it can. Dynamo takes 0
     * and then stores and matches nothing (compatibility.md, Where we differ on purpose); above {@code 2^31 - 1} a
     * block would not fit in a Java array.
     */
    public static String blockSizeProblem(int blockSize) {
        return blockSize > 0
                ? null
                : Integer.toUnsignedString(blockSize) + " is out of range (1.." + Integer.MAX_VALUE + " tokens)";
    }

    /**
     * Why {@code name} cannot be a model name or tenant; null when it can. Any text of up to {@link #MAX_NAME}
     * characters without control characters (a line break or NUL in a name would split log lines and metric labels):
     * slashes, colons, spaces and any script are fine, and so is an empty name, as in Dynamo.
     */
    public static String nameProblem(String name) {
        int length = name.codePointCount(0, name.length());
        if (length > MAX_NAME) {
            return length + " characters; the limit is " + MAX_NAME;
        }
        for (int i = 0, at = 0; i < name.length(); at++) {
            int c = name.codePointAt(i);
            if (Character.isISOControl(c)) {
                return String.format("the control character U+%04X at character %d is not allowed", c, at);
            }
            i += Character.charCount(c);
        }
        return null;
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
