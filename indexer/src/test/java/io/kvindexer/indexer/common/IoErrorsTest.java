package io.kvindexer.indexer.common;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class IoErrorsTest {

    @Test
    void saysWhyAFileFailedAndWhichOneWhenTheCallerNamedAnother(@TempDir Path dir) throws IOException {
        Path missing = dir.resolve("none");
        IOException noFile = catchThrowableOfType(IOException.class, () -> Files.readString(missing));
        assertThat(IoErrors.describe(noFile, missing)).isEqualTo("no such file or directory");
        assertThat(IoErrors.describe(noFile, dir)).isEqualTo("no such file or directory (" + missing + ")");

        Path file = Files.writeString(dir.resolve("file"), "x");
        IOException notDir = catchThrowableOfType(IOException.class, () -> Files.createFile(file.resolve("child")));
        assertThat(IoErrors.describe(notDir, file)).isEqualTo("not a directory (" + file.resolve("child") + ")");

        assertThat(IoErrors.describe(new IOException("disk full"), dir)).isEqualTo("disk full");
        IOException fileInTheWay = catchThrowableOfType(IOException.class, () -> Files.createDirectories(file));
        assertThat(IoErrors.describe(fileInTheWay, file)).isEqualTo("exists and is not a directory");
    }
}
