package io.kvindexer.indexer.hash;

import com.dynatrace.hash4j.hashing.Hasher64;
import com.dynatrace.hash4j.hashing.Hashing;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;

/**
 * The multimodal hashes a block's local hash mixes in (after its tokens, see
 * {@link BlockHasher#hashBlock(int[], int, int, long, long[])}), derived from what the engines send per block:
 * vLLM's {@code extra_keys} identifiers, TensorRT-LLM's {@code mm_keys} digests and Dynamo's own
 * {@code block_mm_infos} (which already carry the u64).
 *
 * <p>An identifier that is a 64-character hex digest is the u64 of its first 16 hex characters (what vLLM's
 * multimodal identifiers and Dynamo agree on); any other identifier is XXH3-64 of its UTF-8 bytes with seed 0.
 * See {@code docs/concepts.md}, local hash.
 */
public final class MultimodalHashes {

    private static final Hasher64 IDENTIFIER_HASH = Hashing.xxh3_64(0L);

    private MultimodalHashes() {}

    /**
     * One per-block item of {@code extra_keys}: a bare string, or the identifier of an {@code [identifier, offset]}
     * tuple (or of another multimodal entry that names its object by a string, such as {@code mm_keys}).
     */
    public record Key(String text, boolean tuple) {}

    /** The u64 of a multimodal identifier. */
    public static long identifierHash(String identifier) {
        if (isCanonicalHex(identifier)) {
            return Long.parseUnsignedLong(identifier, 0, 16, 16);
        }
        return IDENTIFIER_HASH.hashBytesToLong(identifier.getBytes(StandardCharsets.UTF_8));
    }

    /**
     * The multimodal hashes of one block from its keys: tuples always count; a bare string counts only when it
     * is a canonical hex digest (other bare strings are cache salts or LoRA names), and a bare string equal to
     * the event's LoRA name never counts. Null when the block has none.
     */
    public static long[] ofBlock(List<Key> keys, String loraName) {
        if (keys == null || keys.isEmpty()) {
            return null;
        }
        long[] hashes = new long[keys.size()];
        int count = 0;
        for (Key key : keys) {
            if (!key.tuple() && key.text().equals(loraName)) {
                continue;
            }
            if (key.tuple() || isCanonicalHex(key.text())) {
                hashes[count++] = identifierHash(key.text());
            }
        }
        if (count == 0) {
            return null;
        }
        return count == hashes.length ? hashes : Arrays.copyOf(hashes, count);
    }

    /** Both arrays' hashes (either may be null); null when neither has any. */
    public static long[] concat(long[] a, long[] b) {
        if (a == null || a.length == 0) {
            return b == null || b.length == 0 ? null : b;
        }
        if (b == null || b.length == 0) {
            return a;
        }
        long[] out = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }

    static boolean isCanonicalHex(String s) {
        if (s.length() != 64) {
            return false;
        }
        for (int i = 0; i < 64; i++) {
            char c = s.charAt(i);
            if (!(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F')) {
                return false;
            }
        }
        return true;
    }
}
