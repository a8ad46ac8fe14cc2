package io.kvindexer.indexer.event;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Example engine payloads, each produced with real msgspec 0.21.1 (the encoder vLLM and SGLang publish with) in
 * the encodings of compatibility.md, Engine event streams, as contiguous hex.
 */
public final class GoldenPayloads {

    public static final String VLLM_MAP_STORED_MIN = """
            93cb41da3054981000009188a474797065ab426c6f636b53746f726564ac626c6f636b5f686173686573926fccdeb170
            6172656e745f626c6f636b5f68617368c0a9746f6b656e5f696473980102030405060708aa626c6f636b5f73697a6504
            a76c6f72615f6964c0a66d656469756da3475055a96c6f72615f6e616d65c000""";
    public static final String VLLM_MAP_REMOVED_MIN = """
            93cb41da3054981000009183a474797065ac426c6f636b52656d6f766564ac626c6f636b5f686173686573916fa66d65
            6469756da347505500""";
    public static final String VLLM_MAP_CLEARED =
            "93cb41da3054981000009181a474797065b0416c6c426c6f636b73436c656172656400";
    public static final String VLLM_MAP_STORED_REAL = """
            93cb41da305498100000918ba474797065ab426c6f636b53746f726564ac626c6f636b5f686173686573926fccdeb170
            6172656e745f626c6f636b5f68617368c0a9746f6b656e5f696473980102030405060708aa626c6f636b5f73697a6504
            a76c6f72615f6964c0a66d656469756da3475055a96c6f72615f6e616d65c0aa65787472615f6b65797392c0c0a96772
            6f75705f69647800b26b765f63616368655f737065635f6b696e64ae66756c6c5f617474656e74696f6e00""";
    public static final String VLLM_MAP_REMOVED_REAL = """
            93cb41da3054981000009184a474797065ac426c6f636b52656d6f766564ac626c6f636b5f686173686573916fa66d65
            6469756da3475055a967726f75705f6964780000""";
    public static final String VLLM_ARR023_STORED = """
            93cb41da305498100000919cab426c6f636b53746f726564926fccdec098010203040506070804c0a3475055c0c0c0c0
            c000""";
    public static final String VLLM_ARR023_REMOVED =
            "93cb41da3054981000009194ac426c6f636b52656d6f766564916fa3475055c000";
    public static final String VLLM_ARR023_CLEARED = "93cb41da3054981000009191b0416c6c426c6f636b73436c656172656400";
    public static final String VLLM_ARR090_STORED =
            "92cb41da3054981000009196ab426c6f636b53746f726564926fccdec098010203040506070804c0";
    public static final String VLLM_ARR090_REMOVED = "92cb41da3054981000009192ac426c6f636b52656d6f766564916f";
    public static final String VLLM_ARR090_CLEARED = "92cb41da3054981000009191b0416c6c426c6f636b73436c6561726564";
    public static final String SGLANG_ARR_STORED =
            "93cb41da3054981000009197ab426c6f636b53746f726564926fccdec098010203040506070804c0a347505500";
    public static final String SGLANG_MAP_STORED = """
            93cb41da3054981000009187a474797065ab426c6f636b53746f726564ac626c6f636b5f686173686573926fccdeb170
            6172656e745f626c6f636b5f68617368c0a9746f6b656e5f696473980102030405060708aa626c6f636b5f73697a6504
            a76c6f72615f6964c0a66d656469756da347505500""";
    public static final String VLLM_MAP_REMOVED_U64 = """
            93cb41da3054981000009183a474797065ac426c6f636b52656d6f766564ac626c6f636b5f68617368657392cfffffff
            ffffffffffcf8000000000000001a66d656469756da347505500""";
    public static final String VLLM_MAP_REMOVED_BYTES = """
            93cb41da3054981000009183a474797065ac426c6f636b52656d6f766564ac626c6f636b5f68617368657391c4200001
            02030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1fa66d656469756da347505500""";
    public static final String SGLANG_ARR_REMOVED_NEG =
            "93cb41da3054981000009193ac426c6f636b52656d6f76656491fea347505500";
    public static final String VLLM_MAP_UNRANKED =
            "93cb41da3054981000009181a474797065b0416c6c426c6f636b73436c6561726564c0";
    public static final String VLLM_MAP_EMPTY_BATCH = "93cb41da3054981000009000";
    public static final String VLLM_MAP_TWO_EVENTS_RANK1 = """
            93cb41da3054981000009284a474797065ac426c6f636b52656d6f766564ac626c6f636b5f686173686573916fa66d65
            6469756da3475055a967726f75705f696478008aa474797065ab426c6f636b53746f726564ac626c6f636b5f68617368
            657391cd014db1706172656e745f626c6f636b5f68617368ccdea9746f6b656e5f69647394090a0b0caa626c6f636b5f
            73697a6504a76c6f72615f6964c0a66d656469756da3475055a96c6f72615f6e616d65c0aa65787472615f6b65797391
            c0a967726f75705f6964780001""";
    /** compatibility.md, Engine event streams: one vLLM array BlockStored of tokens 1..16, engine hash 0xea06fc71a5ee6e88. */
    public static final String DYNAMO_ARRAY_STORED =
            "93cb41d954fc402000009198ab426c6f636b53746f72656491cfea06fc71a5ee6e88"
                    + "c0dc00100102030405060708090a0b0c0d0e0f1010c0c0c000";
    /** compatibility.md, Engine event streams: BlockRemoved + AllBlocksCleared, rank nil. */
    public static final String DYNAMO_REMOVED_CLEARED =
            "93cb41d954fc404000009293ac426c6f636b52656d6f76656491cfea06fc71a5ee6e88"
                    + "c091b0416c6c426c6f636b73436c6561726564c0";

    static final Map<String, String> ALL = new LinkedHashMap<>();

    static {
        ALL.put("vllm_map_stored_min", VLLM_MAP_STORED_MIN);
        ALL.put("vllm_map_removed_min", VLLM_MAP_REMOVED_MIN);
        ALL.put("vllm_map_cleared", VLLM_MAP_CLEARED);
        ALL.put("vllm_map_stored_real", VLLM_MAP_STORED_REAL);
        ALL.put("vllm_map_removed_real", VLLM_MAP_REMOVED_REAL);
        ALL.put("vllm_arr023_stored", VLLM_ARR023_STORED);
        ALL.put("vllm_arr023_removed", VLLM_ARR023_REMOVED);
        ALL.put("vllm_arr023_cleared", VLLM_ARR023_CLEARED);
        ALL.put("vllm_arr090_stored", VLLM_ARR090_STORED);
        ALL.put("vllm_arr090_removed", VLLM_ARR090_REMOVED);
        ALL.put("vllm_arr090_cleared", VLLM_ARR090_CLEARED);
        ALL.put("sglang_arr_stored", SGLANG_ARR_STORED);
        ALL.put("sglang_map_stored", SGLANG_MAP_STORED);
        ALL.put("vllm_map_removed_u64", VLLM_MAP_REMOVED_U64);
        ALL.put("vllm_map_removed_bytes", VLLM_MAP_REMOVED_BYTES);
        ALL.put("sglang_arr_removed_neg", SGLANG_ARR_REMOVED_NEG);
        ALL.put("vllm_map_unranked", VLLM_MAP_UNRANKED);
        ALL.put("vllm_map_empty_batch", VLLM_MAP_EMPTY_BATCH);
        ALL.put("vllm_map_two_events_rank1", VLLM_MAP_TWO_EVENTS_RANK1);
        ALL.put("dynamo_array_stored", DYNAMO_ARRAY_STORED);
        ALL.put("dynamo_removed_cleared", DYNAMO_REMOVED_CLEARED);
    }

    private GoldenPayloads() {}
}
