package io.kvindexer.indexer.dump;

import java.util.List;

/**
 * The dump of one index: every block it holds as single-block {@link RouterEvent.Stored} events, in an order that
 * replays (parents before children). One entry of the {@code /dump} document.
 *
 * @param modelName model the index serves
 * @param tenantId  tenant (routing group) of the index
 * @param blockSize tokens per block of the index
 * @param events    the events that rebuild it
 */
public record IndexDump(String modelName, String tenantId, int blockSize, List<RouterEvent> events) {

    public IndexDump {
        events = List.copyOf(events);
    }

    /** The {@code "model:tenant"} key of this entry in the {@code /dump} document. */
    public String key() {
        return modelName + ":" + tenantId;
    }
}
