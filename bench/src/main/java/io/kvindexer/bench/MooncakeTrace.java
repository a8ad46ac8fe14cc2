package io.kvindexer.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * A Mooncake request trace (JSONL): per line {@code timestamp} (ms, absolute) or {@code delay} (ms since the
 * previous request), {@code hash_ids} (one id per trace block, 512 tokens in Mooncake traces) and
 * {@code output_length} (alias {@code osl}). Loading and the two deterministic transforms of Dynamo's
 * {@code mooncake_bench} live here.
 */
public record MooncakeTrace(List<Request> requests) {

    /** One request: arrival time, the prompt's trace block ids, and how many tokens it generates. */
    public record Request(long timestampMs, long[] hashIds, int outputLength) {}

    /** Reads the whole file; {@code limit} > 0 keeps only the first {@code limit} requests. */
    public static MooncakeTrace load(Path file, int limit) throws IOException {
        ObjectMapper json = new ObjectMapper();
        List<Request> out = new ArrayList<>();
        long clock = 0;
        int lineNo = 0;
        try (BufferedReader in = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            String line;
            while ((line = in.readLine()) != null && (limit <= 0 || out.size() < limit)) {
                lineNo++;
                if (line.isBlank()) {
                    continue;
                }
                JsonNode node = json.readTree(line);
                long ts;
                if (node.hasNonNull("timestamp")) {
                    ts = node.get("timestamp").asLong();
                } else if (node.hasNonNull("delay")) {
                    ts = clock + node.get("delay").asLong();
                } else {
                    throw new IOException(file + ":" + lineNo + ": neither \"timestamp\" nor \"delay\"");
                }
                clock = ts;
                JsonNode ids = node.get("hash_ids");
                if (ids == null || !ids.isArray()) {
                    throw new IOException(file + ":" + lineNo + ": \"hash_ids\" must be an array");
                }
                long[] hashIds = new long[ids.size()];
                for (int i = 0; i < hashIds.length; i++) {
                    hashIds[i] = ids.get(i).asLong();
                }
                JsonNode osl = node.hasNonNull("output_length") ? node.get("output_length") : node.get("osl");
                out.add(new Request(ts, hashIds, osl == null ? 0 : osl.asInt()));
            }
        }
        return new MooncakeTrace(List.copyOf(out));
    }

    /** Each id {@code h} becomes {@code h*f, ..., h*f+f-1}: the same prefix structure, {@code f} times deeper. */
    public MooncakeTrace lengthFactor(int factor) {
        if (factor <= 1) {
            return this;
        }
        List<Request> out = new ArrayList<>(requests.size());
        for (Request r : requests) {
            long[] ids = new long[r.hashIds().length * factor];
            int p = 0;
            for (long h : r.hashIds()) {
                for (int k = 0; k < factor; k++) {
                    ids[p++] = h * factor + k;
                }
            }
            out.add(new Request(r.timestampMs(), ids, r.outputLength()));
        }
        return new MooncakeTrace(out);
    }

    /**
     * {@code k} structurally identical copies of every request: copy {@code d} adds {@code (maxId+1)*d} to every
     * id (disjoint hash spaces, the same tree shape, the same arrival times).
     */
    public MooncakeTrace dupFactor(int copies) {
        if (copies <= 1) {
            return this;
        }
        long stride = maxId() + 1;
        List<Request> out = new ArrayList<>(requests.size() * copies);
        for (Request r : requests) {
            for (int d = 0; d < copies; d++) {
                long[] ids = r.hashIds().clone();
                for (int i = 0; i < ids.length; i++) {
                    ids[i] += stride * d;
                }
                out.add(new Request(r.timestampMs(), ids, r.outputLength()));
            }
        }
        return new MooncakeTrace(out);
    }

    public long maxId() {
        long max = -1;
        for (Request r : requests) {
            for (long h : r.hashIds()) {
                max = Math.max(max, h);
            }
        }
        return max;
    }

    public long blockRefs() {
        long n = 0;
        for (Request r : requests) {
            n += r.hashIds().length;
        }
        return n;
    }
}
