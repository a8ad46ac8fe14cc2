package io.kvindexer.indexer.common;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The one rule for a token file: trimmed, not empty, one line of printable ASCII; at startup and at every reload. */
class BearerTokensTest {

    @TempDir
    Path dir;

    @Test
    void aTokenIsTheFilesOneLineTrimmed() throws Exception {
        for (String content : List.of("tok", "tok\n", "tok\r\n", "  tok \n\n", "\ntok\r\n\r\n")) {
            Path file = Files.writeString(dir.resolve("token"), content);
            assertThat(BearerTokens.read(file)).as(content).isEqualTo("tok");
        }
    }

    /** No header can carry a line break: a file of two lines would be accepted and then refuse every client. */
    @Test
    void aFileOfMoreThanOneLineIsRefusedSayingSo() throws Exception {
        for (String content : List.of("line1\nline2\n", "line1\r\nline2\r\n", "line1\n\nline2", "a\rb")) {
            Path file = Files.writeString(dir.resolve("token"), content);
            assertThatThrownBy(() -> BearerTokens.read(file))
                    .as(content)
                    .isInstanceOf(IOException.class)
                    .hasMessage(file + " holds 2 lines; a bearer token is one line");
        }
        assertThat(BearerTokens.problem("a\nb\nc")).isEqualTo("holds 3 lines; a bearer token is one line");
        assertThat(BearerTokens.problem(" \n")).isEqualTo("is empty");
        assertThat(BearerTokens.problem(" tok\n")).isNull();
    }

    /**
     * The server reads header values as US-ASCII and browsers send nothing past Latin-1: a token with another
     * character was accepted at start and then refused every client, the right token included.
     */
    @Test
    void aTokenOutsidePrintableAsciiIsRefusedSayingWhere() throws Exception {
        Path file = Files.writeString(dir.resolve("token"), "t\u00f6ken\n");
        assertThatThrownBy(() -> BearerTokens.read(file))
                .isInstanceOf(IOException.class)
                .hasMessage(file + " holds U+00F6 at character 2; a bearer token is printable ASCII (no Authorization"
                        + " header carries other characters)");
        assertThat(BearerTokens.problem("\u201ctok\u201d")).startsWith("holds U+201C at character 1;");
        assertThat(BearerTokens.problem("\ud83d\ude00\u00e9")).startsWith("holds U+1F600 at character 1;");
        assertThat(BearerTokens.problem("ab\ud83d\ude00\u00e9")).startsWith("holds U+1F600 at character 3;");
        assertThat(BearerTokens.problem("to\u0000k")).startsWith("holds U+0000 at character 3;");
        assertThat(BearerTokens.problem("to\u007fk")).startsWith("holds U+007F at character 3;");
        // what a header does carry: base64, base64url, hex, and any other printable ASCII, a space or a tab inside
        for (String ok : List.of(
                "XVzYyygvMPXLRDfqlM1/8O1UxO22wzTnUHsU+3jQPH8=",
                "a-b_c.d~e",
                "pass phrase",
                "a\tb",
                "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")) {
            assertThat(BearerTokens.problem(ok)).as(ok).isNull();
        }
    }

    @Test
    void aReloadOfMoreThanOneLineKeepsTheTokenAndWarns() throws Exception {
        Path file = Files.writeString(dir.resolve("token"), "t1\n");
        BearerTokens tokens = BearerTokens.fromFile(file, Duration.ofMinutes(5));
        List<LogRecord> warnings = new CopyOnWriteArrayList<>();
        Handler capture = new Handler() {
            @Override
            public void publish(LogRecord r) {
                if (r.getLevel().intValue() >= Level.WARNING.intValue()) {
                    warnings.add(r);
                }
            }

            @Override
            public void flush() {}

            @Override
            public void close() {}
        };
        Logger logger = Logger.getLogger(BearerTokens.class.getName());
        logger.addHandler(capture);
        try {
            Files.writeString(file, "line1\nline2\n");
            assertThat(tokens.reload()).isFalse();
        } finally {
            logger.removeHandler(capture);
        }
        assertThat(tokens.current()).isEqualTo("t1");
        assertThat(tokens.accepts("t1")).isTrue();
        for (String refused : List.of("line1", "line2", "line1 line2", "line1\nline2")) {
            assertThat(tokens.accepts(refused)).as(refused).isFalse();
        }
        assertThat(warnings).hasSize(1);
        assertThat(java.text.MessageFormat.format(
                        warnings.get(0).getMessage(), warnings.get(0).getParameters()))
                .isEqualTo("--auth-token-file not re-read: " + file + " holds 2 lines; a bearer token is one line");
        // a file of one line again rotates as usual
        Files.writeString(file, "t2\n");
        assertThat(tokens.reload()).isTrue();
        assertThat(tokens.current()).isEqualTo("t2");
    }
}
