package io.kvindexer.indexer.http;

import com.fasterxml.jackson.core.JsonGenerator;
import java.io.IOException;
import java.util.Map;

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

    private static final byte[] SCORES = MsgpackOut.encoded("scores");
    private static final byte[] FREQUENCIES = MsgpackOut.encoded("frequencies");
    private static final byte[] INSTANCES = MsgpackOut.encoded("instances");
    private static final byte[] LONGEST_MATCHED = MsgpackOut.encoded("longest_matched");
    private static final byte[] GPU = MsgpackOut.encoded("gpu");
    private static final byte[] DP = MsgpackOut.encoded("dp");
    private static final byte[] CPU = MsgpackOut.encoded("cpu");
    private static final byte[] DISK = MsgpackOut.encoded("disk");
    private static final byte[] POD_NAME = MsgpackOut.encoded("pod_name");
    private static final byte[] EXACT = MsgpackOut.encoded("exact");

    static void msgpack(MsgpackOut p, OverlapScores s, InstanceFacts facts) {
        p.mapHeader(3);
        p.raw(SCORES).mapHeader(s.scores().size());
        for (Map.Entry<Long, Map<Integer, Long>> e : s.scores().entrySet()) {
            p.unsignedDecimal(e.getKey());
            ranks(p, e.getValue());
        }
        p.raw(FREQUENCIES).arrayHeader(0);
        p.raw(INSTANCES).mapHeader(s.instances().size());
        for (Map.Entry<Long, OverlapScores.InstanceTiers> e : s.instances().entrySet()) {
            OverlapScores.InstanceTiers t = e.getValue();
            p.unsignedDecimal(e.getKey());
            String pod = facts.podNames().apply(e.getKey());
            p.mapHeader(pod == null ? 6 : 7);
            p.raw(LONGEST_MATCHED).integer(t.longestMatched());
            p.raw(GPU).integer(t.gpu());
            p.raw(DP);
            ranks(p, t.dp());
            p.raw(CPU).integer(t.cpu());
            p.raw(DISK).integer(t.disk());
            if (pod != null) {
                p.raw(POD_NAME).string(pod);
            }
            p.raw(EXACT).bool(facts.exact().test(e.getKey()));
        }
    }

    private static void ranks(MsgpackOut p, Map<Integer, Long> ranks) {
        p.mapHeader(ranks.size());
        for (Map.Entry<Integer, Long> r : ranks.entrySet()) {
            p.unsignedDecimal(Integer.toUnsignedLong(r.getKey())).integer(r.getValue());
        }
    }
}
