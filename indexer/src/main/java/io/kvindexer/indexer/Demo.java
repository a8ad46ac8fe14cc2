package io.kvindexer.indexer;

/** {@code --demo}: embedded engine simulators registered with this indexer (needs the simulator package). */
final class Demo {

    private Demo() {
    }

    static void start(IndexerApp app) {
        System.out.println("kv-indexer: --demo needs the engine simulator, which is not in this build yet");
    }
}
