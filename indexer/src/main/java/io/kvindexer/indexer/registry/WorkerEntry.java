package io.kvindexer.indexer.registry;

import io.kvindexer.indexer.common.Quoted;
import io.kvindexer.indexer.common.ZmqEndpoint;
import java.util.ArrayList;
import java.util.List;

/**
 * One {@code --workers} entry: {@code instance_id[:dp_rank]=endpoint} (compatibility.md, Command line and environment).
 *
 * @param instanceId u64 as a raw 64-bit pattern
 */
public record WorkerEntry(long instanceId, int dpRank, String endpoint) {

    /** Thrown with Dynamo's message for a malformed entry. */
    public static final class InvalidWorkerEntry extends Exception {
        public InvalidWorkerEntry(String message) {
            super(message);
        }
    }

    /**
     * Parses a comma-separated list; entries empty after trimming are skipped. The id and rank parts are not
     * trimmed (as in Dynamo), the endpoint is.
     */
    public static List<WorkerEntry> parseList(String value) throws InvalidWorkerEntry {
        List<WorkerEntry> out = new ArrayList<>();
        for (String raw : value.split(",", -1)) {
            String entry = raw.trim();
            if (entry.isEmpty()) {
                continue;
            }
            out.add(parse(entry));
        }
        return out;
    }

    static WorkerEntry parse(String entry) throws InvalidWorkerEntry {
        int eq = entry.indexOf('=');
        if (eq < 0) {
            throw new InvalidWorkerEntry(
                    "invalid worker entry `" + Quoted.of(entry) + "`; expected worker_id[:dp_rank]=endpoint");
        }
        String left = entry.substring(0, eq).trim();
        String endpoint = entry.substring(eq + 1).trim();
        String idPart = left;
        String rankPart = null;
        int colon = left.indexOf(':');
        if (colon >= 0) {
            idPart = left.substring(0, colon);
            rankPart = left.substring(colon + 1);
        }
        long id;
        try {
            id = UnsignedParse.u64(idPart);
        } catch (NumberFormatException e) {
            throw new InvalidWorkerEntry("invalid worker id in `" + Quoted.of(entry) + "`: " + e.getMessage());
        }
        int rank = 0;
        if (rankPart != null) {
            try {
                rank = UnsignedParse.u32(rankPart);
            } catch (NumberFormatException e) {
                throw new InvalidWorkerEntry("invalid dp_rank in `" + Quoted.of(entry) + "`: " + e.getMessage());
            }
        }
        String problem = ZmqEndpoint.problem(endpoint);
        if (problem != null) {
            throw new InvalidWorkerEntry(problem);
        }
        return new WorkerEntry(id, rank, endpoint);
    }
}
