package io.kvindexer.indexer.ingest;

/**
 * What {@code /workers} shows for one listener.
 *
 * @param lastError null when none
 */
public record ListenerSnapshot(String endpoint, ListenerStatus status, String lastError) {
}
