package io.kvindexer.indexer.http;

import com.fasterxml.jackson.core.JsonGenerator;
import java.io.IOException;
import java.util.Map;
import org.msgpack.core.MessagePacker;

/**
 * The one description of the {@code /query} answer, in its two encodings:
 * {@code {"scores":{id:{dp:tokens}},"frequencies":[],"instances":{id:{longest_matched,gpu,dp,cpu,disk,pod_name?,exact}}}}
 * with ids
 * and ranks as unsigned decimal strings (JSON object keys; the msgpack map keys are the same strings, so a client
 * decodes both alike). A field added to {@link OverlapScores.InstanceTiers} is written in both methods here.
 */
final class OverlapScoresWriter {

    private OverlapScoresWriter() {}

    static void json(JsonGenerator g, OverlapScores s, InstanceFacts facts) throws IOException {
        g.writeStartObject();
        g.writeObjectFieldStart("scores");
        for (Map.Entry<Long, Map<Integer, Long>> e : s.scores().entrySet()) {
            g.writeObjectFieldStart(Long.toUnsignedString(e.getKey()));
            for (Map.Entry<Integer, Long> r : e.getValue().entrySet()) {
                g.writeNumberField(Integer.toUnsignedString(r.getKey()), r.getValue());
            }
            g.writeEndObject();
        }
        g.writeEndObject();
        g.writeArrayFieldStart("frequencies");
        g.writeEndArray();
        g.writeObjectFieldStart("instances");
        for (Map.Entry<Long, OverlapScores.InstanceTiers> e : s.instances().entrySet()) {
            OverlapScores.InstanceTiers t = e.getValue();
            g.writeObjectFieldStart(Long.toUnsignedString(e.getKey()));
            g.writeNumberField("longest_matched", t.longestMatched());
            g.writeNumberField("gpu", t.gpu());
            g.writeObjectFieldStart("dp");
            for (Map.Entry<Integer, Long> r : t.dp().entrySet()) {
                g.writeNumberField(Integer.toUnsignedString(r.getKey()), r.getValue());
            }
            g.writeEndObject();
            g.writeNumberField("cpu", t.cpu());
            g.writeNumberField("disk", t.disk());
            String pod = facts.podNames().apply(e.getKey());
            if (pod != null) {
                g.writeStringField("pod_name", pod);
            }
            g.writeBooleanField("exact", facts.exact().test(e.getKey())); // ours, additive
            g.writeEndObject();
        }
        g.writeEndObject();
        g.writeEndObject();
    }

    static void msgpack(MessagePacker p, OverlapScores s, InstanceFacts facts) throws IOException {
        p.packMapHeader(3);
        p.packString("scores");
        p.packMapHeader(s.scores().size());
        for (Map.Entry<Long, Map<Integer, Long>> e : s.scores().entrySet()) {
            p.packString(Long.toUnsignedString(e.getKey()));
            ranks(p, e.getValue());
        }
        p.packString("frequencies");
        p.packArrayHeader(0);
        p.packString("instances");
        p.packMapHeader(s.instances().size());
        for (Map.Entry<Long, OverlapScores.InstanceTiers> e : s.instances().entrySet()) {
            OverlapScores.InstanceTiers t = e.getValue();
            p.packString(Long.toUnsignedString(e.getKey()));
            String pod = facts.podNames().apply(e.getKey());
            p.packMapHeader(pod == null ? 6 : 7);
            p.packString("longest_matched").packLong(t.longestMatched());
            p.packString("gpu").packLong(t.gpu());
            p.packString("dp");
            ranks(p, t.dp());
            p.packString("cpu").packLong(t.cpu());
            p.packString("disk").packLong(t.disk());
            if (pod != null) {
                p.packString("pod_name").packString(pod);
            }
            p.packString("exact").packBoolean(facts.exact().test(e.getKey()));
        }
    }

    private static void ranks(MessagePacker p, Map<Integer, Long> ranks) throws IOException {
        p.packMapHeader(ranks.size());
        for (Map.Entry<Integer, Long> r : ranks.entrySet()) {
            p.packString(Integer.toUnsignedString(r.getKey())).packLong(r.getValue());
        }
    }
}
