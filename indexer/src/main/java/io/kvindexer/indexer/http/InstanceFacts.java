package io.kvindexer.indexer.http;

import java.util.function.LongFunction;
import java.util.function.LongPredicate;

/**
 * What a query answer says of each instance it names besides its scores, looked up per named instance (a map read
 * each, never a pass over the registrations).
 *
 * @param podNames instance id → pod name, null when unknown ({@code instances[id].pod_name})
 * @param exact    instance id → every listener of it is exact now ({@code instances[id].exact})
 */
record InstanceFacts(LongFunction<String> podNames, LongPredicate exact) {}
