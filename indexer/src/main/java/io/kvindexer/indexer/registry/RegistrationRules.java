package io.kvindexer.indexer.registry;

import io.kvindexer.indexer.common.Quoted;
import io.kvindexer.indexer.common.ServiceLimits;
import io.kvindexer.indexer.common.ZmqEndpoint;
import java.util.Collection;

/** Dynamo's registration rules (compatibility.md, HTTP API) in their order, then our limits. */
final class RegistrationRules {

    private RegistrationRules() {}

    /** Throws when {@code r} may not be registered beside {@code existing} (its instance, if any) and the rest. */
    static void check(
            Registration r,
            Instance existing,
            Collection<Instance> instances,
            ServiceLimits limits,
            int listenerCapacity)
            throws RegistryException {
        String problem = ZmqEndpoint.problem(r.endpoint());
        if (problem != null) {
            throw new RegistryException(RegistryException.Kind.INVALID, problem);
        }
        if (r.replayEndpoint() != null) {
            String replayProblem = ZmqEndpoint.problem(r.replayEndpoint());
            if (replayProblem != null) {
                throw new RegistryException(
                        RegistryException.Kind.INVALID,
                        "invalid replay endpoint `" + Quoted.of(r.replayEndpoint()) + "`: " + replayProblem);
            }
        }
        String id = Long.toUnsignedString(r.instanceId());
        if (existing != null && !existing.sameKey(r.modelName(), r.tenantId())) {
            throw new RegistryException(
                    RegistryException.Kind.CONFLICT,
                    "instance " + id + " is already registered for model=" + existing.model + " tenant="
                            + existing.tenant);
        }
        if (existing != null && existing.ranks.containsKey(r.dpRank())) {
            throw new RegistryException(
                    RegistryException.Kind.CONFLICT,
                    "instance " + id + " dp_rank " + Integer.toUnsignedString(r.dpRank()) + " already registered");
        }
        if (existing != null
                && existing.podName != null
                && r.podName() != null
                && !existing.podName.equals(r.podName())) {
            throw new RegistryException(
                    RegistryException.Kind.CONFLICT,
                    "instance " + id + " is already registered for pod " + existing.podName);
        }
        checkLimits(existing, id, instances, limits, listenerCapacity);
    }

    /** A client may not grow the registrations without bound (design: limits). */
    private static void checkLimits(
            Instance existing, String id, Collection<Instance> instances, ServiceLimits limits, int listenerCapacity)
            throws RegistryException {
        if (existing != null && existing.ranks.size() >= limits.maxRanksPerInstance()) {
            throw new RegistryException(
                    RegistryException.Kind.CONFLICT,
                    "instance " + id + " already has "
                            + existing.ranks.size() + " dp ranks registered; the limit is "
                            + limits.maxRanksPerInstance()
                            + " (--max-ranks-per-instance)");
        }
        int listeners = instances.stream().mapToInt(i -> i.ranks.size()).sum();
        if (listeners >= limits.maxListeners()) {
            throw new RegistryException(
                    RegistryException.Kind.CONFLICT,
                    listeners + " listeners are registered; the limit is " + limits.maxListeners()
                            + " (--max-listeners)");
        }
        if (listeners >= listenerCapacity) {
            throw new RegistryException(
                    RegistryException.Kind.CONFLICT,
                    listeners + " listeners are registered; this process can hold " + listenerCapacity
                            + " (the open-file limit: a file per engine connection; raise `ulimit -n` or lower --max-listeners)");
        }
    }
}
