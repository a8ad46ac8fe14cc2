package io.kvindexer.indexer.dump;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvindexer.indexer.common.StorageTier;
import io.kvindexer.indexer.common.WorkerKey;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The binary dump codec: exact round trip, and every truncation and single-bit flip is refused. */
class BinaryDumpTest {

    /** One membership as the writer takes it and the reader gives it back. */
    record M(long instanceId, int dpRank, StorageTier tier, boolean hasParent, long parent, long block, long local) {}

    record Section(String model, String tenant, int blockSize, List<M> memberships) {}

    /** The block a reader announced; the owners that follow hold it. */
    record Block(boolean hasParent, long parent, long hash, long local) {}

    /** One block's last-store time as a version 3 stream carries it. */
    record T(long instanceId, int dpRank, StorageTier tier, long block, long epochMillis) {}

    /** One block's cache salt as a version 5 stream carries it. */
    record S(long instanceId, int dpRank, String salt, long block) {}

    /** Collects what a reader delivers; {@code ended} only after END. */
    static final class Collector implements BinaryDumpReader.Visitor {
        final List<Section> sections = new ArrayList<>();
        final List<WorkerKey> workers = new ArrayList<>();
        final List<SavedRegistration> registrations = new ArrayList<>();
        final List<T> times = new ArrayList<>();
        final List<S> salts = new ArrayList<>();
        Block block;
        boolean ended;

        @Override
        public void registration(SavedRegistration registration) {
            registrations.add(registration);
        }

        @Override
        public void index(String modelName, String tenantId, int blockSize) {
            sections.add(new Section(modelName, tenantId, blockSize, new ArrayList<>()));
            workers.clear();
        }

        @Override
        public void worker(int ref, long instanceId, int dpRank) {
            assertThat(ref).isEqualTo(workers.size());
            workers.add(new WorkerKey(instanceId, dpRank));
        }

        @Override
        public void block(boolean hasParent, long parentBlockHash, long blockHash, long localHash) {
            block = new Block(hasParent, parentBlockHash, blockHash, localHash);
        }

        @Override
        public void owner(int workerRef, StorageTier tier) {
            WorkerKey w = workers.get(workerRef);
            sections.getLast()
                    .memberships()
                    .add(new M(
                            w.instanceId(),
                            w.dpRank(),
                            tier,
                            block.hasParent(),
                            block.parent(),
                            block.hash(),
                            block.local()));
        }

        @Override
        public void storeTimes(long instanceId, int dpRank, StorageTier tier, long[] blockHashes, long[] epochMillis) {
            for (int i = 0; i < blockHashes.length; i++) {
                times.add(new T(instanceId, dpRank, tier, blockHashes[i], epochMillis[i]));
            }
        }

        @Override
        public void cacheSalts(long instanceId, int dpRank, String salt, long[] blockHashes) {
            for (long hash : blockHashes) {
                salts.add(new S(instanceId, dpRank, salt, hash));
            }
        }

        @Override
        public void end() {
            ended = true;
        }
    }

    static byte[] write(List<Section> sections) throws IOException {
        return write(sections, null);
    }

    /** Version 2 with {@code registrations}, version 1 when null. */
    static byte[] write(List<Section> sections, List<SavedRegistration> registrations) throws IOException {
        return write(
                out -> registrations == null ? new BinaryDumpWriter(out) : new BinaryDumpWriter(out, registrations),
                sections,
                (w, s) -> {});
    }

    /** A writer of some version on a stream. */
    interface Opener {
        BinaryDumpWriter open(java.io.OutputStream out) throws IOException;
    }

    /** {@code sections} through the writer {@code opener} makes: each one's memberships, then what {@code after} adds. */
    static byte[] write(
            Opener opener, List<Section> sections, java.util.function.BiConsumer<BinaryDumpWriter, Section> after)
            throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        BinaryDumpWriter w = opener.open(out);
        for (Section s : sections) {
            w.beginIndex(s.model(), s.tenant(), s.blockSize());
            memberships(w, s);
            after.accept(w, s);
            w.endIndex();
        }
        w.close();
        return out.toByteArray();
    }

    /** Writes the memberships of {@code s} into the section begun last. */
    static void memberships(BinaryDumpWriter w, Section s) {
        for (M m : s.memberships()) {
            w.membership(
                    new WorkerKey(m.instanceId(), m.dpRank()),
                    m.tier(),
                    m.hasParent(),
                    m.parent(),
                    m.block(),
                    m.local());
        }
    }

    static Collector read(byte[] bytes) throws IOException {
        Collector c = new Collector();
        BinaryDumpReader.read(new ByteArrayInputStream(bytes), c);
        return c;
    }

    /** The reader refuses {@code in} as malformed, and never reports the END of the stream. */
    private static void assertRefused(ByteArrayInputStream in, String description, Object... args) {
        Collector c = new Collector();
        assertThatThrownBy(() -> BinaryDumpReader.read(in, c))
                .as(description, args)
                .isInstanceOf(BinaryDump.FormatException.class);
        assertThat(c.ended).isFalse();
    }

    /** Chains of blocks per worker, blocks shared across workers, all tiers, extreme u64 and u32 values. */
    static List<Section> sample(int chains, int length, long seed) {
        Random rnd = new Random(seed);
        List<M> ms = new ArrayList<>();
        long[] ids = {1, -1L, Long.MIN_VALUE, 42};
        int[] ranks = {0, -1, 7};
        for (int c = 0; c < chains; c++) {
            long parent = 0;
            boolean hasParent = c % 3 == 1;
            if (hasParent) {
                parent = rnd.nextLong();
            }
            for (int i = 0; i < length; i++) {
                long block = rnd.nextLong();
                int owners = 1 + rnd.nextInt(3);
                for (int o = 0; o < owners; o++) {
                    ms.add(new M(
                            ids[(c + o) % ids.length],
                            ranks[(c + 2 * o) % ranks.length],
                            StorageTier.ofOrdinal((c + o) % 4),
                            hasParent,
                            hasParent ? parent : 0,
                            block,
                            rnd.nextLong()));
                }
                // owners of one block share its local hash
                long local = ms.getLast().local();
                for (int k = ms.size() - owners; k < ms.size(); k++) {
                    M m = ms.get(k);
                    ms.set(k, new M(m.instanceId(), m.dpRank(), m.tier(), m.hasParent(), m.parent(), m.block(), local));
                }
                hasParent = true;
                parent = block;
            }
        }
        return List.of(
                new Section("org:llama", "default", 16, ms),
                new Section("mistral", "ténant", 64, List.of(new M(5, 0, StorageTier.DISK, false, 0, -7L, 99))),
                new Section("empty", "t", 4, List.of()));
    }

    /** Registrations with and without the optional fields, extreme ids, ranks and watermarks. */
    static List<SavedRegistration> registrations(int n) {
        List<SavedRegistration> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            out.add(new SavedRegistration(
                    i == 0 ? -1L : i,
                    i % 3 == 0 ? -1 : i % 3,
                    "tcp://127.0.0.1:" + (5000 + i),
                    i % 2 == 0 ? "tcp://127.0.0.1:" + (6000 + i) : null,
                    i % 4 == 1 ? "engine-" + i : null,
                    "org:llama",
                    i % 5 == 0 ? "ténant" : "default",
                    16,
                    i == 1 ? -1L : 1000L * i));
        }
        return out;
    }

    @Test
    void version2CarriesRegistrationsAndTheTreesExactly() throws IOException {
        List<Section> sections = sample(50, 10, 11);
        List<SavedRegistration> regs = registrations(3000); // more than one REGISTRATIONS frame
        byte[] bytes = write(sections, regs);
        assertThat(bytes[9]).isEqualTo((byte) BinaryDump.VERSION_WITH_REGISTRATIONS);
        Collector back = read(bytes);
        assertThat(back.ended).isTrue();
        assertThat(back.registrations).isEqualTo(regs);
        assertThat(back.sections).isEqualTo(sections);
        // version 1 stays byte for byte what it was: the same trees without registrations
        byte[] v1 = write(sections);
        assertThat(v1[9]).isEqualTo((byte) BinaryDump.VERSION);
        assertThat(read(v1).registrations).isEmpty();
        assertThat(read(write(List.of(), List.of())).ended).isTrue();
    }

    /** Version 3: {@code sections} with the times of every membership's block on its worker and tier. */
    static byte[] writeWithTimes(List<Section> sections, List<T> times) throws IOException {
        return write(out -> new BinaryDumpWriter(out, registrations(2), true), sections, (w, s) -> {
            if (s != sections.getFirst()) {
                return; // the times go with the first section
            }
            java.util.Map<List<Object>, List<T>> runs = new java.util.LinkedHashMap<>();
            for (T t : times) {
                runs.computeIfAbsent(List.of(t.instanceId(), t.dpRank(), t.tier()), k -> new ArrayList<>())
                        .add(t);
            }
            for (List<T> run : runs.values()) {
                T first = run.getFirst();
                w.storeTimes(
                        new WorkerKey(first.instanceId(), first.dpRank()),
                        first.tier(),
                        run.stream().mapToLong(T::block).toArray(),
                        run.stream().mapToLong(T::epochMillis).toArray());
            }
        });
    }

    @Test
    void version3CarriesTheStoreTimesExactlyAndStaysSmall() throws IOException {
        List<Section> sections = sample(1, 20, 13);
        List<T> times = new ArrayList<>();
        Random rnd = new Random(14);
        long at = 1_765_000_000_000L;
        for (int i = 0; i < 20_000; i++) { // more than one STORE_TIMES frame; a step back now and then
            at += rnd.nextInt(50) - (i % 97 == 0 ? 10_000 : 0);
            times.add(new T(i % 3, i % 2, i % 5 == 0 ? StorageTier.DISK : StorageTier.HOST_PINNED, rnd.nextLong(), at));
        }
        byte[] bytes = writeWithTimes(sections, times);
        assertThat(bytes[9]).isEqualTo((byte) BinaryDump.VERSION_WITH_STORE_TIMES);
        Collector back = read(bytes);
        assertThat(back.ended).isTrue();
        assertThat(back.sections).isEqualTo(sections);
        assertThat(back.registrations).isEqualTo(registrations(2));
        assertThat(new java.util.HashSet<>(back.times)).isEqualTo(new java.util.HashSet<>(times));
        assertThat(back.times).hasSize(times.size());
        int withoutTimes = writeWithTimes(sections, List.of()).length;
        assertThat((bytes.length - withoutTimes) / (double) times.size())
                .as("bytes per store time")
                .isLessThan(11);
    }

    @Test
    void everyTruncationAndBitFlipOfAVersion3StreamIsRefused() throws IOException {
        byte[] bytes = writeWithTimes(
                sample(1, 2, 15),
                List.of(new T(1, 0, StorageTier.DISK, 5, 1000), new T(1, 0, StorageTier.DISK, 6, 990)));
        assertEveryTruncationRefused(bytes);
        assertEveryBitFlipRefused(bytes);
    }

    /** Registrations of which every other one has the batch at its watermark (extreme digests and timestamps). */
    static List<SavedRegistration> withBatches(List<SavedRegistration> plain) {
        List<SavedRegistration> out = new ArrayList<>();
        double[] stamps = {1_765_000_000.123456, 0.0, Double.NaN, -1.5, 9.9e9};
        for (int i = 0; i < plain.size(); i++) {
            SavedRegistration r = plain.get(i);
            out.add(new SavedRegistration(
                    r.instanceId(),
                    r.dpRank(),
                    r.endpoint(),
                    r.replayEndpoint(),
                    r.podName(),
                    r.modelName(),
                    r.tenantId(),
                    r.blockSize(),
                    r.watermark(),
                    i % 2 == 1
                            ? null
                            : new SavedRegistration.WatermarkBatch(
                                    i == 0 ? -1L : 0x9E37_79B9_7F4A_7C15L * i, stamps[i % stamps.length])));
        }
        return out;
    }

    /** Version 4: {@code registrations} with their watermarks' batches, then {@code sections}. */
    static byte[] writeWithBatches(List<Section> sections, List<SavedRegistration> registrations, boolean times)
            throws IOException {
        return write(out -> new BinaryDumpWriter(out, registrations, times, true), sections, (w, s) -> {
            if (times && !s.memberships().isEmpty()) {
                M m = s.memberships().getFirst();
                w.storeTimes(new WorkerKey(m.instanceId(), m.dpRank()), m.tier(), new long[] {m.block()}, new long[] {
                    1_765_000_000_000L
                });
            }
        });
    }

    @Test
    void version4CarriesTheBatchAtEachWatermarkExactly() throws IOException {
        List<Section> sections = sample(20, 5, 16);
        List<SavedRegistration> regs = withBatches(registrations(3000)); // more than one REGISTRATIONS frame
        for (boolean times : new boolean[] {false, true}) {
            byte[] bytes = writeWithBatches(sections, regs, times);
            assertThat(bytes[9]).isEqualTo((byte) BinaryDump.VERSION_WITH_WATERMARK_BATCHES);
            Collector back = read(bytes);
            assertThat(back.ended).isTrue();
            assertThat(back.sections).isEqualTo(sections);
            assertThat(back.registrations).isEqualTo(regs); // (records compare doubles by their bits: NaN too)
            assertThat(back.times).hasSize(times ? 2 : 0);
        }
        // the versions before it still read as they did: their registrations come without a batch
        Collector v2 = read(write(sections, registrations(3)));
        assertThat(v2.registrations).isEqualTo(registrations(3)).allMatch(r -> r.watermarkBatch() == null);
        Collector v3 = read(writeWithTimes(sections, List.of()));
        assertThat(v3.registrations).isEqualTo(registrations(2)).allMatch(r -> r.watermarkBatch() == null);
    }

    @Test
    void everyTruncationAndBitFlipOfAVersion4StreamIsRefused() throws IOException {
        byte[] bytes = writeWithBatches(sample(1, 2, 17), withBatches(registrations(3)), true);
        assertEveryTruncationRefused(bytes);
        assertEveryBitFlipRefused(bytes);
    }

    /** {@code plain} with every third one's watermark marked {@link SavedRegistration#fromSnapshot}. */
    static List<SavedRegistration> marked(List<SavedRegistration> plain) {
        List<SavedRegistration> out = new ArrayList<>();
        for (int i = 0; i < plain.size(); i++) {
            SavedRegistration r = plain.get(i);
            out.add(new SavedRegistration(
                    r.instanceId(),
                    r.dpRank(),
                    r.endpoint(),
                    r.replayEndpoint(),
                    r.podName(),
                    r.modelName(),
                    r.tenantId(),
                    r.blockSize(),
                    r.watermark(),
                    r.watermarkBatch(),
                    i % 3 == 0));
        }
        return out;
    }

    /** Version 6 (salts when {@code salts}), else what the same writer wrote before it: version 4 or 5. */
    static byte[] writeWithMarks(
            List<Section> sections, List<SavedRegistration> registrations, boolean salts, boolean marks)
            throws IOException {
        return write(out -> new BinaryDumpWriter(out, registrations, true, true, salts, marks), sections, (w, s) -> {
            if (s.memberships().isEmpty()) {
                return;
            }
            M m = s.memberships().getFirst();
            WorkerKey worker = new WorkerKey(m.instanceId(), m.dpRank());
            w.storeTimes(worker, m.tier(), new long[] {m.block()}, new long[] {1_765_000_000_000L});
            if (salts) {
                w.cacheSalts(worker, "s", new long[] {m.block()});
            }
        });
    }

    @Test
    void version6CarriesWhichWatermarksAreASnapshotsExactly() throws IOException {
        List<Section> sections = sample(20, 5, 21);
        List<SavedRegistration> regs = marked(withBatches(registrations(3000))); // more than one frame
        assertThat(regs).anyMatch(SavedRegistration::fromSnapshot).anyMatch(r -> !r.fromSnapshot());
        for (boolean salts : new boolean[] {false, true}) {
            byte[] bytes = writeWithMarks(sections, regs, salts, true);
            assertThat(bytes[9]).isEqualTo((byte) BinaryDump.VERSION_WITH_SNAPSHOT_WATERMARKS);
            Collector back = read(bytes);
            assertThat(back.ended).isTrue();
            assertThat(back.sections).isEqualTo(sections);
            assertThat(back.registrations).isEqualTo(regs);
            assertThat(back.times).hasSize(2); // (the third section is empty)
            assertThat(back.salts).hasSize(salts ? 2 : 0);
            // without the marks asked for, the same writer writes what it wrote before version 6, byte for byte:
            // the marks stay out (a reader that did not ask refuses version 6), and every watermark reads current
            byte[] unasked = writeWithMarks(sections, regs, salts, false);
            assertThat(unasked[9]).isEqualTo((byte)
                    (salts ? BinaryDump.VERSION_WITH_CACHE_SALTS : BinaryDump.VERSION_WITH_WATERMARK_BATCHES));
            assertThat(unasked).isEqualTo(writeWithMarks(sections, withBatches(registrations(3000)), salts, false));
            assertThat(read(unasked).registrations).isEqualTo(withBatches(registrations(3000)));
        }
        // a version 6 stream with no watermark marked reads as the same registrations, none a snapshot's
        assertThat(read(writeWithMarks(sections, registrations(4), false, true)).registrations)
                .isEqualTo(registrations(4))
                .noneMatch(SavedRegistration::fromSnapshot);
    }

    @Test
    void everyTruncationAndBitFlipOfAVersion6StreamIsRefused() throws IOException {
        byte[] bytes = writeWithMarks(sample(1, 2, 22), marked(withBatches(registrations(3))), true, true);
        assertEveryTruncationRefused(bytes);
        assertEveryBitFlipRefused(bytes);
    }

    /** Version 5: {@code sections}, each followed by what {@code salts} writes. */
    static byte[] writeWithSalts(List<Section> sections, java.util.function.Consumer<BinaryDumpWriter> salts)
            throws IOException {
        return write(
                out -> new BinaryDumpWriter(out, registrations(2), false, false, true),
                sections,
                (w, s) -> salts.accept(w));
    }

    @Test
    void version5CarriesTheSaltsOfTheSectionsWorkersOnly() throws IOException {
        List<Section> sections = sample(1, 20, 18);
        M first = sections.getFirst().memberships().getFirst(); // the other two sections do not name this worker
        WorkerKey someone = new WorkerKey(first.instanceId(), first.dpRank());
        WorkerKey stranger = new WorkerKey(424242, 0); // no membership in the section
        long[] many = java.util.stream.LongStream.range(1_000, 11_000).toArray(); // more than one frame
        byte[] bytes = writeWithSalts(sections, w -> {
            w.cacheSalts(someone, "tenant-ä", many);
            w.cacheSalts(stranger, "tenant-b", new long[] {8, 9});
            w.cacheSalts(someone, "", new long[] {7});
        });
        assertThat(bytes[9]).isEqualTo((byte) BinaryDump.VERSION_WITH_CACHE_SALTS);
        Collector back = read(bytes);
        assertThat(back.ended).isTrue();
        assertThat(back.sections).isEqualTo(sections);
        assertThat(back.registrations).isEqualTo(registrations(2));
        List<S> expected = new ArrayList<>();
        for (long hash : many) {
            expected.add(new S(someone.instanceId(), someone.dpRank(), "tenant-ä", hash));
        }
        expected.add(new S(someone.instanceId(), someone.dpRank(), "", 7));
        assertThat(back.salts).as("the stranger's left out").containsExactlyElementsOf(expected);
    }

    @Test
    void everyTruncationAndBitFlipOfAVersion5StreamIsRefusedAndSaltsBeforeVersion5Are() throws IOException {
        List<Section> one = sample(1, 2, 19);
        M m = one.getFirst().memberships().getFirst();
        byte[] bytes = writeWithSalts(
                one, w -> w.cacheSalts(new WorkerKey(m.instanceId(), m.dpRank()), "s", new long[] {m.block()}));
        assertEveryTruncationRefused(bytes);
        assertEveryBitFlipRefused(bytes);
        byte[] asVersion4 = bytes.clone();
        asVersion4[9] = (byte) BinaryDump.VERSION_WITH_WATERMARK_BATCHES;
        assertThatThrownBy(() -> read(asVersion4)).hasMessageContaining("CACHE_SALTS before version 5");
    }

    @Test
    void everyTruncationAndBitFlipOfAVersion2StreamIsRefused() throws IOException {
        byte[] bytes = write(sample(2, 3, 12), registrations(3));
        assertEveryTruncationRefused(bytes);
        assertEveryBitFlipRefused(bytes);
    }

    @Test
    void roundTripIsExact() throws IOException {
        List<Section> sections = sample(200, 40, 1); // several BLOCKS frames
        byte[] bytes = write(sections);
        Collector back = read(bytes);
        assertThat(back.ended).isTrue();
        assertThat(back.sections).isEqualTo(sections);
        long memberships =
                sections.stream().mapToLong(s -> s.memberships().size()).sum();
        assertThat(bytes.length / (double) memberships)
                .as("bytes per membership")
                .isLessThan(24);
    }

    @Test
    void emptyDumpRoundTrips() throws IOException {
        Collector back = read(write(List.of()));
        assertThat(back.ended).isTrue();
        assertThat(back.sections).isEmpty();
    }

    @Test
    void everyTruncationAndBitFlipOfAVersion1StreamIsRefused() throws IOException {
        assertEveryTruncationRefused(write(sample(6, 5, 2)));
        assertEveryBitFlipRefused(write(sample(4, 4, 5)));
    }

    @Test
    void truncationOfAMultiFrameDumpIsRefusedAtSampledOffsets() throws IOException {
        byte[] bytes = write(sample(300, 50, 3));
        assertThat(bytes.length).isGreaterThan(3 * 64 * 1024);
        Random rnd = new Random(4);
        for (int i = 0; i < 200; i++) {
            int cut = i < 100 ? rnd.nextInt(bytes.length) : bytes.length - 1 - rnd.nextInt(64);
            assertRefused(new ByteArrayInputStream(bytes, 0, cut), "cut at %d", cut);
        }
    }

    @Test
    void trailingBytesAndOtherVersionsAreRefusedWithAClearMessage() throws IOException {
        byte[] bytes = write(sample(2, 2, 6));
        byte[] longer = Arrays.copyOf(bytes, bytes.length + 1);
        assertThatThrownBy(() -> read(longer)).hasMessageContaining("after the END frame");
        byte[] v7 = bytes.clone();
        v7[9] = 7;
        assertThatThrownBy(() -> read(v7)).hasMessageContaining("unsupported binary dump version 7");
        assertThatThrownBy(() -> read("{\"m:t\":{}}".getBytes())).hasMessageContaining("bad magic");
    }

    @Test
    void anErrorFrameFailsTheWholeStream() throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        BinaryDumpWriter w = new BinaryDumpWriter(out);
        w.beginIndex("a", "t", 4);
        w.membership(new WorkerKey(1, 0), StorageTier.DEVICE, false, 0, 11, 12);
        w.endIndex();
        w.error("b", "t", "IllegalStateException");
        w.close();
        Collector c = new Collector();
        assertThatThrownBy(() -> BinaryDumpReader.read(new ByteArrayInputStream(out.toByteArray()), c))
                .hasMessageContaining("the peer failed to dump b:t: IllegalStateException");
        assertThat(c.ended).isFalse();
    }

    private static void assertEveryTruncationRefused(byte[] bytes) {
        for (int cut = 0; cut < bytes.length; cut++) {
            assertRefused(new ByteArrayInputStream(bytes, 0, cut), "cut at %d of %d", cut, bytes.length);
        }
    }

    private static void assertEveryBitFlipRefused(byte[] bytes) {
        for (int bit = 0; bit < bytes.length * 8; bit++) {
            byte[] bad = bytes.clone();
            bad[bit / 8] ^= (byte) (1 << (bit % 8));
            assertRefused(new ByteArrayInputStream(bad), "bit %d", bit);
        }
    }
}
