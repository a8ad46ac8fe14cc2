package io.kvindexer.operator.crd.v1alpha1;

import com.fasterxml.jackson.annotation.JsonAnyGetter;
import com.fasterxml.jackson.annotation.JsonAnySetter;
import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.databind.JsonNode;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * Spec fields this operator does not know, e.g. from a newer CRD applied before the operator was upgraded (the
 * API server keeps what its schema declares). They are collected instead of failing the informer and reported by
 * the reconcilers as a warning; the operator never writes a spec, so nothing is lost. Only an any-setter (no
 * any-getter): it adds no property to the generated schema, and the CRD generator marks an object as preserving
 * unknown fields only when told to.
 *
 * <p>A spec that cannot be read at all (a known field of another type, a malformed quantity) is a placeholder that
 * says why ({@link #unreadable()}) and keeps what was written, so that it serializes back unchanged ({@link
 * LenientSpec}).
 */
public abstract class UnknownFields {
    @JsonIgnore
    private final Map<String, Object> unknown = new TreeMap<>();

    @JsonIgnore
    private String unreadable;

    @JsonIgnore
    private JsonNode written;

    @JsonAnySetter
    void putUnknown(String name, Object value) {
        unknown.put(name, value);
    }

    /** Written back out, so that the copies JOSDK makes of a resource keep them. */
    @JsonAnyGetter
    Map<String, Object> unknown() {
        return unknown;
    }

    /** Names of the fields this operator ignores, sorted. */
    public Set<String> unknownFieldNames() {
        return Set.copyOf(unknown.keySet());
    }

    /** Why this spec could not be read (naming the field), or null when it was read. */
    public String unreadable() {
        return unreadable;
    }

    /** The spec as written, kept only when it could not be read. */
    JsonNode written() {
        return written;
    }

    void markUnreadable(String why, JsonNode asWritten) {
        this.unreadable = why;
        this.written = asWritten;
    }
}
