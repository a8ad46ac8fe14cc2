package io.kvindexer.indexer.http;

import io.kvindexer.indexer.common.Tenants;
import io.kvindexer.indexer.common.ZmqEndpoint;
import io.kvindexer.indexer.registry.Registration;
import java.nio.IntBuffer;

/**
 * The request bodies of the API, decoded field by field from a {@link JsonBody}. Unknown fields are ignored (as
 * in Dynamo); {@code routing_group} is an alias of {@code tenant_id} (the one that counts when both are given) and
 * {@code additionalsalt} of
 * {@code additional_salt}. A string field given as null is refused (422), only absence takes the default; an
 * optional field given as null counts as absent.
 */
final class Requests {

    private Requests() {}

    record Unregister(long instanceId, String modelName, String tenantId, Integer dpRank) {}

    /**
     * @param tokenIds between its position and limit (a view of the body's bytes when they were a msgpack bin)
     * @param eagle    {@code is_eagle}: hash EAGLE windows, as SGLang's EAGLE stores are hashed (Dynamo's flag name)
     */
    record Query(
            IntBuffer tokenIds, String modelName, String tenantId, String loraName, String cacheSalt, boolean eagle) {}

    /**
     * @param localHashes {@code block_hashes} on the wire, but they are local hashes (XXH3 of each block's tokens)
     * @param cacheSalt   null when the request had none (Dynamo G3 refuses one here: the hashes carry the salt)
     */
    record HashQuery(long[] localHashes, String modelName, String tenantId, String cacheSalt) {}

    record ListenerControl(long instanceId, int dpRank) {}

    static Registration register(JsonBody body) {
        Long instanceId = null;
        String endpoint = null;
        String model = null;
        String tenant = null;
        String group = null;
        Integer blockSize = null;
        Integer dpRank = null;
        String replay = null;
        String podName = null;
        for (String f; (f = body.nextField()) != null; ) {
            switch (f) {
                case "instance_id" -> instanceId = body.u64(f);
                case "endpoint" -> endpoint = body.string(f);
                case "model_name" -> model = body.string(f);
                case "tenant_id" -> tenant = body.string(f);
                case "routing_group" -> group = body.string(f);
                case "block_size" -> blockSize = body.u32(f);
                case "dp_rank" -> dpRank = body.optionalU32(f);
                case "replay_endpoint" -> replay = body.optionalString(f);
                case "pod_name" -> podName = body.optionalString(f);
                case "additional_salt", "additionalsalt" -> body.optionalString(f); // accepted, ignored (G2)
                default -> body.skipUnknown();
            }
        }
        require(instanceId, "instance_id");
        require(endpoint, "endpoint");
        require(model, "model_name");
        require(blockSize, "block_size");
        String sizeProblem = Registration.blockSizeProblem(blockSize);
        if (sizeProblem != null) {
            throw new ApiError(422, "invalid value for `block_size`: " + sizeProblem);
        }
        validEndpoint("endpoint", endpoint);
        if (replay != null) {
            validEndpoint("replay_endpoint", replay);
        }
        validNames(model, tenant, group);
        String podProblem = Registration.podNameProblem(podName);
        if (podProblem != null) {
            throw new ApiError(400, podProblem);
        }
        return new Registration(
                instanceId,
                endpoint,
                model,
                partition(tenant, group),
                blockSize,
                dpRank == null ? 0 : dpRank,
                replay,
                podName);
    }

    static Unregister unregister(JsonBody body) {
        Long instanceId = null;
        String model = null;
        String tenant = null;
        String group = null;
        Integer dpRank = null;
        for (String f; (f = body.nextField()) != null; ) {
            switch (f) {
                case "instance_id" -> instanceId = body.u64(f);
                case "model_name" -> model = body.string(f);
                case "tenant_id" -> tenant = body.optionalString(f);
                case "routing_group" -> group = body.optionalString(f);
                case "dp_rank" -> dpRank = body.optionalU32(f);
                default -> body.skipUnknown();
            }
        }
        require(instanceId, "instance_id");
        require(model, "model_name");
        validNames(model, tenant, group);
        return new Unregister(instanceId, model, group != null ? group : tenant, dpRank);
    }

    static Query query(RequestFields body) {
        IntBuffer tokens = null;
        String model = null;
        String tenant = null;
        String group = null;
        String lora = null;
        String salt = null;
        Boolean eagle = null;
        for (String f; (f = body.nextField()) != null; ) {
            switch (f) {
                case "token_ids" -> tokens = body.u32Array(f);
                case "model_name" -> model = body.string(f);
                case "tenant_id" -> tenant = body.string(f);
                case "routing_group" -> group = body.string(f);
                case "lora_name" -> lora = body.optionalString(f);
                case "cache_salt" -> salt = body.optionalString(f);
                case "is_eagle" -> eagle = body.optionalBoolean(f);
                default -> body.skipUnknown();
            }
        }
        require(tokens, "token_ids");
        require(model, "model_name");
        validNames(model, tenant, group);
        return new Query(tokens, model, partition(tenant, group), lora, salt, Boolean.TRUE.equals(eagle));
    }

    static HashQuery queryByHash(RequestFields body) {
        long[] hashes = null;
        String model = null;
        String tenant = null;
        String group = null;
        String salt = null;
        for (String f; (f = body.nextField()) != null; ) {
            switch (f) {
                case "block_hashes" -> hashes = body.hashArray(f);
                case "model_name" -> model = body.string(f);
                case "tenant_id" -> tenant = body.string(f);
                case "routing_group" -> group = body.string(f);
                case "cache_salt" -> salt = body.optionalString(f); // ignored (G2), refused with G3's salt rules
                default -> body.skipUnknown();
            }
        }
        require(hashes, "block_hashes");
        require(model, "model_name");
        validNames(model, tenant, group);
        return new HashQuery(hashes, model, partition(tenant, group), salt);
    }

    /**
     * The (model, tenant) partition's tenant: {@code routing_group} when given, as newer Dynamo reads only that one
     * (and ignores a {@code tenant_id} beside it), else {@code tenant_id}, else the default.
     */
    private static String partition(String tenantId, String routingGroup) {
        return routingGroup != null ? routingGroup : tenantId != null ? tenantId : Tenants.DEFAULT;
    }

    static String peerUrl(JsonBody body) {
        String url = null;
        for (String f; (f = body.nextField()) != null; ) {
            if (f.equals("url")) {
                url = body.string(f);
            } else {
                body.skipUnknown();
            }
        }
        require(url, "url");
        return url;
    }

    static ListenerControl listenerControl(JsonBody body) {
        Long instanceId = null;
        Integer dpRank = null;
        for (String f; (f = body.nextField()) != null; ) {
            switch (f) {
                case "instance_id" -> instanceId = body.u64(f);
                case "dp_rank" -> dpRank = body.optionalU32(f);
                default -> body.skipUnknown();
            }
        }
        require(instanceId, "instance_id");
        return new ListenerControl(instanceId, dpRank == null ? 0 : dpRank);
    }

    /**
     * The model and the tenant that counts (when given) are names a registration can have: no index has another, and
     * a query or unregister naming one (up to a body's size) would be echoed into its 404 and the access log.
     */
    private static void validNames(String model, String tenant, String group) {
        validName("model_name", model);
        if (group != null) {
            validName("routing_group", group);
        } else if (tenant != null) {
            validName("tenant_id", tenant);
        }
    }

    private static void validName(String field, String name) {
        String problem = Registration.nameProblem(name);
        if (problem != null) {
            throw new ApiError(422, "invalid value for `" + field + "`: " + problem);
        }
    }

    /** An endpoint too long to be one is a 422 naming the field, before the registry quotes it in a 400. */
    private static void validEndpoint(String field, String endpoint) {
        String problem = ZmqEndpoint.lengthProblem(endpoint);
        if (problem != null) {
            throw new ApiError(422, "invalid value for `" + field + "`: " + problem);
        }
    }

    private static void require(Object value, String field) {
        if (value == null) {
            throw JsonBody.missing(field);
        }
    }
}
