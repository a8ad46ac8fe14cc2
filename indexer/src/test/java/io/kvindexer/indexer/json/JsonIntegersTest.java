package io.kvindexer.indexer.json;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import java.io.IOException;
import org.junit.jupiter.api.Test;

/** The range edges of the shared integer checks. */
class JsonIntegersTest {

    private static final JsonFactory FACTORY = new JsonFactory();

    private static JsonParser at(String number) throws IOException {
        JsonParser p = FACTORY.createParser(number);
        assertThat(p.nextToken()).isEqualTo(JsonToken.VALUE_NUMBER_INT);
        return p;
    }

    @Test
    void sixtyFourBitsMeansSignedOrUnsigned() throws IOException {
        assertThat(JsonIntegers.fits64(at("18446744073709551615"))).isTrue();
        assertThat(JsonIntegers.bits64(at("18446744073709551615"))).isEqualTo(-1L);
        assertThat(JsonIntegers.bits64(at("9223372036854775808"))).isEqualTo(Long.MIN_VALUE);
        assertThat(JsonIntegers.fits64(at("18446744073709551616"))).isFalse();
        assertThat(JsonIntegers.fits64(at("-9223372036854775808"))).isTrue();
        assertThat(JsonIntegers.bits64(at("-9223372036854775808"))).isEqualTo(Long.MIN_VALUE);
        assertThat(JsonIntegers.fits64(at("-9223372036854775809"))).isFalse();
        assertThat(JsonIntegers.bits64(at("7"))).isEqualTo(7L);
    }

    @Test
    void unsignedRejectsNegatives() throws IOException {
        assertThat(JsonIntegers.fitsU64(at("0"))).isTrue();
        assertThat(JsonIntegers.fitsU64(at("18446744073709551615"))).isTrue();
        assertThat(JsonIntegers.fitsU64(at("-1"))).isFalse();
        assertThat(JsonIntegers.isNegativeLong(at("-1"))).isTrue();
        assertThat(JsonIntegers.fitsU64(at("-9223372036854775809"))).isFalse();
        assertThat(JsonIntegers.isNegativeLong(at("-9223372036854775809"))).isFalse();
        assertThat(JsonIntegers.fitsU64(at("18446744073709551616"))).isFalse();
    }

    @Test
    void thirtyTwoBitsUnsigned() throws IOException {
        assertThat(JsonIntegers.u32(at("0"))).isZero();
        assertThat(JsonIntegers.u32(at("4294967295"))).isEqualTo(0xFFFF_FFFFL);
        assertThat(JsonIntegers.u32(at("4294967296"))).isEqualTo(-1);
        assertThat(JsonIntegers.u32(at("-1"))).isEqualTo(-1);
        assertThat(JsonIntegers.u32(at("99999999999999999999999"))).isEqualTo(-1);
    }
}
