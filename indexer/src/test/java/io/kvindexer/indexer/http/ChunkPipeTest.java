package io.kvindexer.indexer.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.OutputStream;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.zip.CRC32;
import org.junit.jupiter.api.Test;

/**
 * The binary {@code /dump}'s hand-over between the encoder and the response: a write never blocks (the encoder may
 * hold an index lock), the encoder waits between chunks of the walk while a slow client has more than the limit to
 * take, and a client that goes away wakes it.
 */
class ChunkPipeTest {

    private static final int MB = 1024 * 1024;

    /** A client that takes {@code delayMillis} per write and checksums what it got. */
    private static final class SlowClient extends OutputStream {
        final CRC32 crc = new CRC32();
        final AtomicLong bytes = new AtomicLong();
        final long delayMillis;

        SlowClient(long delayMillis) {
            this.delayMillis = delayMillis;
        }

        @Override
        public void write(int b) {
            write(new byte[] {(byte) b}, 0, 1);
        }

        @Override
        public void write(byte[] b, int off, int n) {
            try {
                Thread.sleep(delayMillis);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            crc.update(b, off, n);
            bytes.addAndGet(n);
        }
    }

    private static byte[] pattern(int i) {
        byte[] b = new byte[64 * 1024];
        for (int k = 0; k < b.length; k++) {
            b[k] = (byte) (i * 31 + k);
        }
        return b;
    }

    @Test
    void theEncoderWaitsBetweenChunksWhileASlowClientHasMoreThanTheLimitToTake() throws Exception {
        long limit = 2L * MB;
        ChunkPipe pipe = new ChunkPipe(limit);
        CRC32 sent = new CRC32();
        AtomicLong mostWaiting = new AtomicLong();
        CompletableFuture<Void> encoder = CompletableFuture.runAsync(() -> {
            try {
                for (int i = 0; i < 512; i++) { // 32 MB in writes of 64 KB, a "chunk of the walk" per 1 MB
                    byte[] b = pattern(i);
                    sent.update(b);
                    pipe.write(b, 0, b.length);
                    mostWaiting.accumulateAndGet(pipe.waiting(), Math::max);
                    if (i % 16 == 15) {
                        pipe.awaitRoom();
                    }
                }
                pipe.finish(null);
            } catch (IOException e) {
                pipe.finish(e);
            }
        });
        SlowClient client = new SlowClient(2);
        pipe.drainTo(client);
        encoder.get(60, TimeUnit.SECONDS);

        assertThat(client.bytes.get()).isEqualTo(32L * MB);
        assertThat(client.crc.getValue()).isEqualTo(sent.getValue());
        // the limit, plus what one chunk of the walk writes after the last wait (1 MB), give or take a pipe chunk
        assertThat(mostWaiting.get()).isGreaterThan(limit).isLessThanOrEqualTo(limit + MB + 256 * 1024);
    }

    @Test
    void aWriteNeverWaitsEvenAboveTheLimit() throws Exception {
        ChunkPipe pipe = new ChunkPipe(MB);
        for (int i = 0; i < 64; i++) { // 4 MB with no client at all
            byte[] b = pattern(i);
            pipe.write(b, 0, b.length);
        }
        pipe.flush();
        assertThat(pipe.waiting()).isEqualTo(4L * MB);
    }

    @Test
    void aClientThatGoesAwayWakesTheWaitingEncoder() throws Exception {
        ChunkPipe pipe = new ChunkPipe(MB);
        CompletableFuture<Void> encoder = CompletableFuture.runAsync(() -> {
            try {
                for (int i = 0; ; i++) {
                    byte[] b = pattern(i);
                    pipe.write(b, 0, b.length);
                    if (i % 16 == 15) {
                        pipe.awaitRoom();
                    }
                }
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        });
        OutputStream gone = new OutputStream() {
            int writes;

            @Override
            public void write(int b) throws IOException {
                write(new byte[] {(byte) b}, 0, 1);
            }

            @Override
            public void write(byte[] b, int off, int n) throws IOException {
                if (++writes == 3) {
                    throw new IOException("connection reset");
                }
            }
        };
        assertThatThrownBy(() -> pipe.drainTo(gone)).hasMessage("connection reset");
        assertThatThrownBy(() -> encoder.get(30, TimeUnit.SECONDS))
                .isInstanceOf(ExecutionException.class)
                .hasRootCauseMessage("the client went away");
    }
}
