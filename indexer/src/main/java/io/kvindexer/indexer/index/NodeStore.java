package io.kvindexer.indexer.index;

import it.unimi.dsi.fastutil.HashCommon;
import it.unimi.dsi.fastutil.ints.IntArrayFIFOQueue;
import it.unimi.dsi.fastutil.ints.IntArrayList;
import it.unimi.dsi.fastutil.longs.Long2ObjectOpenHashMap;
import java.util.Arrays;
import java.util.BitSet;

/**
 * The block nodes of one prefix index, as struct-of-arrays indexed by an int node id (no object per node).
 *
 * <p>A node is one engine block: its block hash (the engine's opaque chained hash, unique key), the block hash of
 * its parent (if any), its local hash (XXH3 of its tokens, what queries carry), its content prefix hash
 * ({@link ContentPrefix}) and its owners ({@link OwnerSets}). Two {@link NodeTable}s of node ids find nodes: by
 * block hash (writers, removes, parents) and by content prefix (queries: every position of a query is one
 * independent probe, see {@link PrefixMatcher}).
 *
 * <p>A node's prefix is known when its parent's is: a root block's always, a child's when its parent is in the index
 * with a known prefix when the child is created. A block whose parent is not (a lower tier or recovered block under
 * an evicted parent, or under a parent that is itself unresolved) is an <em>orphan</em>: it sits in a third, usually
 * empty table keyed by its parent's block hash, and gets its prefix (and its orphans theirs, and so on) as soon as
 * that parent appears. A query can reach a block only through a chain of present blocks from the root, which are
 * all resolved, so orphans are exactly the blocks no query can reach yet. A node keeps its prefix when its parent is
 * freed: children are keyed by content, not by node id, so the parent's return reconnects them.
 *
 * <p>Not thread-safe: {@link PrefixIndex} guards it with its lock.
 */
final class NodeStore {

    static final int NONE = -1;

    /**
     * Paged storage: pages of {@value #PAGE} nodes never move once allocated, so growing costs no copy and no
     * slack beyond the last page, and no array is big enough to become a (region-wasting) humongous object.
     * A node's fields sit next to each other ({@code [4 * offset + BLOCK|PARENT|LOCAL|PREFIX]}): 32 bytes, the
     * fourth long holding the 32-bit content prefix in its upper half and the owner word ({@link OwnerSets}) in its
     * lower half, so the probe that checks a node's prefix has loaded its owners too.
     */
    static final int PAGE_BITS = 11; // 2,048 nodes (64 KB): the unused tail of the last page is 32 KB on average

    static final int PAGE = 1 << PAGE_BITS;
    static final int OFFSET_MASK = PAGE - 1;
    static final int BLOCK = 0;
    static final int PARENT = 1;
    static final int LOCAL = 2;
    static final int PREFIX = 3;
    /** the owner word's long: the same as the prefix's */
    static final int OWNERS = PREFIX;

    static final int STRIDE = 4;

    /** nodes per bucket of {@link #indexPrefixes}' sort */
    private static final int PLACE_BUCKET = 256;

    /**
     * Page slots a new store starts with (they double as it grows): few, so that a recovery's warm-up
     * (RecoveryWarmUp, ~12 k nodes) grows them as a real dump does; a growth the JIT's profile never saw taken throws
     * the compiled staging away on the clock.
     */
    static final int FIRST_PAGES = 2;

    private long[][] hashes = new long[FIRST_PAGES][];
    /** per node bits: whether it has a parent (a root block stores parent 0) */
    private long[][] hasParentBits = new long[FIRST_PAGES][];
    /** per node bits: whether its content prefix is known (then in line or in the prefix table; else an orphan) */
    private long[][] resolvedBits = new long[FIRST_PAGES][];
    /**
     * per node bits: the node is <em>in line</em>, the only child of the node before it with its local hash:
     * resolved, its parent is node {@code id - 1} (so its prefix was chained from that node's), and no other node has
     * that parent and its local hash (a <em>sibling</em>). Set when it is created (or resolved) so; cleared when node
     * {@code id - 1} is freed or a sibling is resolved, and not set again while it lives (a clear bit only costs a
     * probe). Lets {@link #soleNextChild} and {@link #inLineRun} skip the probe, so a node in line is not in
     * {@link #byPrefix} at all: a walk reaches it only from node {@code id - 1}, which always tries it first. It enters
     * the table when it leaves the line ({@link #leaveLine}).
     */
    private long[][] inLineBits = new long[FIRST_PAGES][];

    private final OwnerSets owners = new OwnerSets();
    private int pages;

    private int highWater;
    private final FreeIds freeIds = new FreeIds();
    /**
     * Ids kept free after a chain's end ({@link #keepNextFree}), in gaps of {@link #GAP}: not among {@link #freeIds},
     * so only a block under the node before them takes one. Oldest gap first in {@link #gaps}.
     */
    private final BitSet kept = new BitSet();

    private int keptCount;
    private final IntArrayFIFOQueue gaps = new IntArrayFIFOQueue();
    private int liveCount;
    private int orphanCount;
    private final IntArrayList pending = new IntArrayList();
    /** {@link #prefetch}'s scratch: home slots */
    private int[] homes = new int[64];
    /** what {@link #prefetch} loaded, summed: written so that the loads are not optimised away */
    private long prefetched;
    /**
     * While recovery stages a detached index ({@link #deferPrefixes}), resolved nodes are not yet in {@link #byPrefix}
     * and have no in-line bit: nothing probes them before {@link #indexPrefixes}, which places them all in one table
     * sized once instead of growing it under every insert.
     */
    private boolean prefixesDeferred;
    /**
     * While {@link #prefixesDeferred}: {@code prefix << 32 | node} of every resolved node gathered so far (the nodes
     * below {@link #gatheredUpTo}, and orphans below it resolved since), for {@link #indexPrefixes}.
     */
    private long[] gathered;

    private int gatheredCount;
    private int gatheredUpTo;
    /** {@link #children}' map, null after any create or free */
    private Long2ObjectOpenHashMap<IntArrayList> childIndex;

    private final NodeTable byBlockHash =
            new NodeTable(node -> blockHashSlot(blockHash(node)), this::isAllocated, this::highWater);
    /**
     * The resolved nodes that are not in line ({@link #inLineBits}), by content prefix: what the probe needs. About
     * 2 % of the nodes on a trace of chains, so it is kept at most a quarter full: a probe that finds nothing (every
     * new block's sibling check) then ends within a slot or two and rarely reads a foreign node.
     */
    private final NodeTable byPrefix = new NodeTable(
            this::prefixKey,
            node -> isAllocated(node) && isResolved(node) && !bit(inLineBits, node),
            this::highWater,
            PROBE_TABLE_FULL_PERCENT);

    private static final int PROBE_TABLE_FULL_PERCENT = 25;

    private final NodeTable orphans = new NodeTable(
            node -> blockHashSlot(parentBlockHash(node)),
            node -> isAllocated(node) && !isResolved(node),
            this::highWater);

    // ---- node fields ----------------------------------------------------------------------------------------

    /** The owners of every node (same node ids). */
    OwnerSets owners() {
        return owners;
    }

    int liveCount() {
        return liveCount;
    }

    /** Node ids are below this value; ids that are not {@link #isLive} are free. */
    int highWater() {
        return highWater;
    }

    /** A node is live while it has an owner (a store adds one before its write ends: see PrefixIndex#store). */
    boolean isLive(int node) {
        return !owners.isEmpty(node);
    }

    long blockHash(int node) {
        return hashes[node >>> PAGE_BITS][STRIDE * (node & OFFSET_MASK) + BLOCK];
    }

    long localHash(int node) {
        return hashes[node >>> PAGE_BITS][STRIDE * (node & OFFSET_MASK) + LOCAL];
    }

    boolean hasParent(int node) {
        return bit(hasParentBits, node);
    }

    long parentBlockHash(int node) {
        return hashes[node >>> PAGE_BITS][STRIDE * (node & OFFSET_MASK) + PARENT];
    }

    /** The content prefix; meaningful only when {@link #isResolved}. */
    int prefix(int node) {
        return prefixOf(hashes[node >>> PAGE_BITS][STRIDE * (node & OFFSET_MASK) + PREFIX]);
    }

    /** The prefix in a node's {@link #PREFIX} long (its upper half). */
    static int prefixOf(long prefixAndOwners) {
        return (int) (prefixAndOwners >>> 32);
    }

    private void setPrefix(int node, int prefix) {
        long[] page = hashes[node >>> PAGE_BITS];
        int at = STRIDE * (node & OFFSET_MASK) + PREFIX;
        page[at] = (long) prefix << 32 | (page[at] & 0xFFFFFFFFL);
    }

    boolean isResolved(int node) {
        return bit(resolvedBits, node);
    }

    /** The page holding a node's hashes ({@code [STRIDE * (node & OFFSET_MASK) + field]}), for the matcher's probes. */
    long[] page(int node) {
        return hashes[node >>> PAGE_BITS];
    }

    int orphanCount() {
        return orphanCount;
    }

    /**
     * Allocated (between create and free), i.e. in the tables. No bit of its own: a root block is always resolved,
     * so "no parent and not resolved" never describes an allocated node, and {@link #free} clears both bits.
     */
    private boolean isAllocated(int node) {
        return bit(hasParentBits, node) || bit(resolvedBits, node);
    }

    // ---- create / free -------------------------------------------------------------------------------------

    /** Creates a node, finding its parent by hash (the caller checked that no node has this block hash). */
    int create(long blockHash, boolean hasParent, long parentBlockHash, long local) {
        return create(
                blockHash, hasParent, parentBlockHash, local, hasParent ? findByBlockHash(parentBlockHash) : NONE);
    }

    /**
     * Creates a node (the caller checked that no node has this block hash and adds an owner right away).
     * {@code parentNode} is the node whose block hash is {@code parentBlockHash}, or NONE when there is none.
     */
    int create(long blockHash, boolean hasParent, long parentBlockHash, long local, int parentNode) {
        return create(blockHash, hasParent, parentBlockHash, local, parentNode, 1);
    }

    /**
     * Like {@link #create(long, boolean, long, long, int)}, for the first of {@code chainLeft} new blocks of a chain
     * (this one included) that are created one after the other: their ids are laid out in line where free ids allow
     * ({@link #allocate}).
     */
    int create(long blockHash, boolean hasParent, long parentBlockHash, long local, int parentNode, int chainLeft) {
        int node = allocate(parentNode, chainLeft);
        childIndex = null;
        long[] page = hashes[node >>> PAGE_BITS];
        int at = STRIDE * (node & OFFSET_MASK);
        page[at + BLOCK] = blockHash;
        page[at + PARENT] = hasParent ? parentBlockHash : 0L;
        page[at + LOCAL] = local;
        boolean resolved = !hasParent || (parentNode != NONE && isResolved(parentNode));
        // no owners.reset: a free id has no owners and clear "same" bits already (free() reset it, a page starts so)
        setPrefix(
                node, resolved ? ContentPrefix.extend(hasParent ? prefix(parentNode) : ContentPrefix.ROOT, local) : 0);
        setBit(hasParentBits, node, hasParent);
        setBit(resolvedBits, node, resolved);
        byBlockHash.insert(node);
        if (resolved) {
            if (!prefixesDeferred) {
                enterByPrefix(node, hasParent ? parentNode : NONE);
            }
            if (orphanCount > 0) {
                resolveOrphansUnder(node);
            }
        } else {
            orphans.insert(node);
            orphanCount++;
        }
        liveCount++;
        return node;
    }

    /** Frees a node that has no owner left. Its children keep their prefixes: its return reconnects them. */
    void free(int node) {
        childIndex = null;
        byBlockHash.remove(node);
        if (isResolved(node)) {
            if (!prefixesDeferred && !bit(inLineBits, node)) {
                byPrefix.remove(node);
            }
        } else {
            orphans.remove(node);
            orphanCount--;
        }
        setBit(hasParentBits, node, false); // with resolved clear: not allocated
        setBit(resolvedBits, node, false);
        setBit(inLineBits, node, false);
        if (node + 1 < highWater && bit(inLineBits, node + 1)) {
            // its parent, this node, is gone: a walk may reach it from the parent's return, by a probe
            if (prefixesDeferred) {
                setBit(inLineBits, node + 1, false);
            } else {
                leaveLine(node + 1);
            }
        }
        owners.reset(node);
        freeIds.add(node);
        liveCount--;
    }

    /** Gives the orphans waiting for {@code parent} (resolved) their prefixes, and theirs to their own orphans. */
    private void resolveOrphansUnder(int parent) {
        pending.clear();
        pending.add(parent);
        IntArrayList found = new IntArrayList();
        while (!pending.isEmpty() && orphanCount > 0) {
            int p = pending.popInt();
            long parentHash = blockHash(p);
            found.clear();
            long hash = blockHashSlot(parentHash);
            for (int i = orphans.home(hash); ; i = orphans.next(i)) {
                int entry = orphans.at(i);
                if (entry == 0) {
                    break;
                }
                int o = NodeTable.node(entry);
                if (NodeTable.mayHold(entry, hash) && parentBlockHash(o) == parentHash) {
                    found.add(o);
                }
            }
            for (int k = 0; k < found.size(); k++) {
                int o = found.getInt(k);
                orphans.remove(o);
                orphanCount--;
                setPrefix(o, ContentPrefix.extend(prefix(p), localHash(o)));
                setBit(resolvedBits, o, true);
                if (!prefixesDeferred) {
                    enterByPrefix(o, p);
                } else if (o < gatheredUpTo) {
                    gather(o);
                }
                pending.add(o);
            }
        }
    }

    /**
     * Recovery's staging into an empty store: from now until {@link #indexPrefixes}, resolved nodes stay out of
     * {@link #byPrefix} (see {@link #prefixesDeferred}). Ignored when the store holds nodes already.
     */
    void deferPrefixes() {
        if (highWater == 0) {
            prefixesDeferred = true;
            owners.deferSame();
            gathered = new long[1024];
        }
    }

    /**
     * Recovery's staging into an empty store, before its first record: about {@code blocks} nodes will come, so the
     * block-hash table is sized for them once (its growth was a fifth of the staging writer's time); trimmed to what
     * came at {@link #indexPrefixes}. Ignored when the store holds nodes already.
     */
    void expectBlocks(int blocks) {
        if (highWater == 0) {
            byBlockHash.sizeFor((int) Math.min(blocks, Math.min(NodeTable.MAX_NODES, HINTED_BLOCKS_MAX)));
        }
    }

    /**
     * The most blocks a peer's hint sizes the table for: one per KB of heap (a real block costs 40-100 B), so a
     * huge or hostile hint cannot take the heap; past it the table grows as it does without a hint.
     */
    static final long HINTED_BLOCKS_MAX = Runtime.getRuntime().maxMemory() / 1024;

    /** The block-hash table's slots (tests: what a table costs). */
    int byBlockHashCapacity() {
        return byBlockHash.capacity();
    }

    /**
     * Ends {@link #deferPrefixes}: every resolved node ({@link #gatherStaged} gathered them) out of line enters the
     * prefix table, sized once for them, with the in-line bit {@link #create} would have given it (staging frees
     * nothing, so the node before is its parent exactly when it has the parent's block hash; the node is sole when no
     * other node has its prefix, whatever the order they were inserted in).
     *
     * <p>Placed in the order of their home slots, not at random: a counting pass sorts the gathered nodes by the top
     * bits of their prefix's table hash (which order the homes), about {@value #PLACE_BUCKET} nodes a bucket, so the
     * placing pass writes the table from one end to the other and reads no node but the rare one whose entry's hash
     * bits agree. Inserted in id order, every node cost a miss on the table (ADR 0001, "Sixth round — recovery").
     */
    void indexPrefixes() {
        if (!prefixesDeferred) {
            return;
        }
        gatherStaged();
        prefixesDeferred = false;
        owners.undeferSame();
        byBlockHash.trimToSize();
        long[] entries = gathered;
        int count = gatheredCount;
        gathered = null;
        // every resolved node first (a scratch table), which finds the nodes that share a prefix and clears their
        // in-line bits; then the nodes left out of line into byPrefix
        NodeTable all = everyResolvedByPrefix();
        all.sizeFor(count);
        long[] sorted = byHome(entries, count);
        placeEveryResolved(all, sorted);
        byPrefix.sizeFor(outOfLine(sorted));
        placeOutOfLine(sorted);
    }

    // indexPrefixes' passes are methods of their own: it runs once per section, so the JIT compiles each pass's loop
    // on the stack, and a small method is quicker to compile than the whole of indexPrefixes again for every loop

    /** {@code entries[0, count)} ordered by the top bits of their prefix's table hash, in gathering order within. */
    private static long[] byHome(long[] entries, int count) {
        int bucketBits = Math.max(1, 32 - Integer.numberOfLeadingZeros(count / PLACE_BUCKET));
        int shift = 64 - bucketBits;
        int[] next = new int[(1 << bucketBits) + 1];
        for (int k = 0; k < count; k++) {
            next[(int) (ContentPrefix.tableHash((int) (entries[k] >>> 32)) >>> shift) + 1]++;
        }
        for (int b = 1; b < next.length; b++) {
            next[b] += next[b - 1];
        }
        long[] sorted = new long[count];
        for (int k = 0; k < count; k++) {
            long e = entries[k];
            sorted[next[(int) (ContentPrefix.tableHash((int) (e >>> 32)) >>> shift)]++] = e;
        }
        return sorted;
    }

    /** The gathered nodes into {@code all} ({@link #placeByPrefix}), which clears the in-line bits of siblings. */
    private void placeEveryResolved(NodeTable all, long[] gathered) {
        for (long e : gathered) {
            placeByPrefix(all, (int) e, (int) (e >>> 32));
        }
    }

    /** How many of the gathered nodes are out of line (counted without a branch the JIT could trap on). */
    private int outOfLine(long[] gathered) {
        int count = 0;
        for (long e : gathered) {
            int node = (int) e;
            count += (int) (~inLineBits[node >>> PAGE_BITS][(node & OFFSET_MASK) >>> 6] >>> node) & 1;
        }
        return count;
    }

    /** The gathered nodes out of line into {@link #byPrefix}, sized for them. */
    private void placeOutOfLine(long[] gathered) {
        for (long e : gathered) {
            int node = (int) e;
            if (!bit(inLineBits, node)) {
                byPrefix.placeSized(node, ContentPrefix.tableHash((int) (e >>> 32)));
            }
        }
    }

    /**
     * While staging, after each frame's records: gathers the frame's resolved nodes for {@link #indexPrefixes} with
     * their tentative in-line bit, and sets their same-owners bits ({@link OwnerSets#deferSame}), while their lines
     * are still in the cache and the writer waits for the next frame, rather than in passes over every node after the
     * last one.
     */
    void gatherStaged() {
        if (!prefixesDeferred) {
            return;
        }
        for (int node = gatheredUpTo; node < highWater; node++) {
            if (isResolved(node)) {
                gather(node);
            }
        }
        gatheredUpTo = highWater;
        owners.refreshSame(highWater);
    }

    /** Gathers a resolved node; in line (so far) when the node before is its parent, as {@link #create} decides. */
    private void gather(int node) {
        if (gatheredCount == gathered.length) {
            gathered = Arrays.copyOf(gathered, gatheredCount * 2);
        }
        gathered[gatheredCount++] = (long) prefix(node) << 32 | node;
        setBit(
                inLineBits,
                node,
                // hasParent first: node 0 is a root in any dump but one that starts with an orphan, so the JIT does
                // not compile out, then trap on, the test for it in each new staging
                hasParent(node) && node > 0 && isAllocated(node - 1) && blockHash(node - 1) == parentBlockHash(node));
    }

    /**
     * {@link #indexPrefixes}: places one node into {@code all}; a node already there with its prefix and this one are
     * not in line (every sibling has the same prefix; other nodes with it lose the shortcut needlessly, which is rare).
     */
    private void placeByPrefix(NodeTable all, int node, int prefix) {
        long hash = ContentPrefix.tableHash(prefix);
        int i = all.home(hash);
        for (int entry; (entry = all.at(i)) != 0; i = all.next(i)) {
            int other = NodeTable.node(entry);
            if (NodeTable.mayHold(entry, hash) && prefix(other) == prefix) {
                setBit(inLineBits, other, false);
                setBit(inLineBits, node, false);
            }
        }
        all.fill(i, hash, node);
    }

    /**
     * A node just resolved under {@code parent} (NONE: a root block): in line when its parent is the node before and
     * it has no sibling, then kept out of {@link #byPrefix}; else inserted there, and the node in line under the same
     * parent ({@code parent + 1}), if it has this node's local hash, leaves the line. Most new blocks of a chain are in
     * line: they cost one probe of a table that holds only the nodes out of line, and no insert.
     */
    private void enterByPrefix(int node, int parent) {
        if (parent != NONE && parent == node - 1 && !hasSibling(node)) {
            setBit(inLineBits, node, true);
            return;
        }
        // inserted before its sibling leaves the line: an insert that grows the table re-places every node out of
        // line but the one it inserts, so this node, out of line already, would be placed twice the other way round
        byPrefix.insert(node);
        int sole = parent + 1; // past the highest id when the parent is it (no page may hold it then)
        if (parent != NONE
                && sole != node
                && sole < highWater
                && bit(inLineBits, sole)
                && localHash(sole) == localHash(node)) {
            leaveLine(sole);
        }
    }

    /** A node in line stops being so: it enters {@link #byPrefix}, which a walk now needs to find it. */
    private void leaveLine(int node) {
        setBit(inLineBits, node, false);
        byPrefix.insert(node);
    }

    /**
     * Whether a node other than {@code node} in {@link #byPrefix} has its parent and local hash (a sibling: its
     * prefix is the same). A sibling is never in line (only {@code node} can be, under its parent). The probe ends
     * at the empty slot an insert of {@code node} then fills (find-then-insert).
     */
    private boolean hasSibling(int node) {
        int prefix = prefix(node);
        long hash = ContentPrefix.tableHash(prefix);
        long parent = parentBlockHash(node);
        long local = localHash(node);
        for (int i = byPrefix.home(hash); ; i = byPrefix.next(i)) {
            int entry = byPrefix.at(i);
            if (entry == 0) {
                byPrefix.missedAt(hash, i);
                return false;
            }
            int other = NodeTable.node(entry);
            if (NodeTable.mayHold(entry, hash)
                    && prefix(other) == prefix
                    && localHash(other) == local
                    && hasParent(other)
                    && parentBlockHash(other) == parent) {
                return true;
            }
        }
    }

    /**
     * The id of a new node whose chain goes on for {@code chainLeft} blocks from it, under {@code parent} (NONE: none
     * known). In line where it can be: the id after the parent's when that one is free. Else the start of a run of
     * free ids as long as the chain (up to {@link #RUN_WANTED}), else a fresh id while the free ones are few (the ids
     * may exceed the live nodes by an eighth: {@link #roomToGrow}), else the start of the longest free run a bounded
     * search saw (there is one: some id is free). Handed out last-freed-first instead, the ids an index whose engines
     * evict frees scatter every chain stored later, and its walk probes at every seam (docs/adr/0001-prefix-index.md).
     */
    private int allocate(int parent, int chainLeft) {
        if (keptCount > 0 && parent != NONE && kept.get(parent + 1)) {
            kept.clear(parent + 1);
            keptCount--;
            return parent + 1;
        }
        if (freeIds.isEmpty()) {
            return newId();
        }
        boolean grow = roomToGrow();
        if (parent != NONE) {
            int next = parent + 1;
            if (next == highWater && grow) {
                return newId();
            }
            if (freeIds.take(next)) {
                return next;
            }
        }
        int start = freeIds.findRun(Math.min(chainLeft, RUN_WANTED), highWater, !grow);
        if (start >= 0 && freeIds.take(start)) {
            return start;
        }
        return newId(); // no run long enough, and room to grow
    }

    /** ids kept free after a chain's end for the blocks later stores hang under it */
    static final int GAP = 4;

    /**
     * Keeps the {@value #GAP} ids after {@code node}, the last block a store created, free for the blocks later
     * stores hang under it: an engine stores a request's decode blocks one store at a time, between other requests'
     * and other engines' stores, so without a gap each took the next fresh id, far from its parent, and a walk could
     * not take it in line (ADR 0001, "Twenty-fifth round"). Only where the chain ends on the newest id (elsewhere the
     * ids after it are free already or another chain's). Bounded: past an eighth of the live nodes (and 64 ids) the
     * oldest gaps' unused ids become free ids, which the chain's next block still takes while nobody else has.
     */
    void keepNextFree(int node) {
        if (prefixesDeferred || node + 1 != highWater || highWater > NodeTable.MAX_NODES - GAP) {
            return;
        }
        for (int i = 0; i < GAP; i++) {
            kept.set(newId());
        }
        keptCount += GAP;
        gaps.enqueue(node + 1);
        while (keptCount > (liveCount >>> 3) + 64) {
            int start = gaps.dequeueInt();
            for (int id = start; id < start + GAP; id++) {
                if (kept.get(id)) {
                    kept.clear(id);
                    keptCount--;
                    freeIds.add(id);
                }
            }
        }
    }

    /** Ids kept free after chain ends ({@link #keepNextFree}; tests). */
    int keptCount() {
        return keptCount;
    }

    /** a free run this long is taken for a chain at least as long (a longer chain goes on in the next run) */
    private static final int RUN_WANTED = 64;

    /** Whether fresh ids may be made while free ones wait: up to an eighth of the live nodes (and 64) free. */
    private boolean roomToGrow() {
        return freeIds.count() <= (liveCount >>> 3) + 64;
    }

    private int newId() {
        if (highWater == NodeTable.MAX_NODES) {
            throw new IllegalStateException("the index holds " + highWater + " blocks, its maximum");
        }
        if (highWater == pages * PAGE) {
            if (pages == hashes.length) {
                int n = pages * 2;
                hashes = Arrays.copyOf(hashes, n);
                hasParentBits = Arrays.copyOf(hasParentBits, n);
                resolvedBits = Arrays.copyOf(resolvedBits, n);
                inLineBits = Arrays.copyOf(inLineBits, n);
            }
            hashes[pages] = new long[STRIDE * PAGE];
            hasParentBits[pages] = new long[PAGE / 64];
            resolvedBits[pages] = new long[PAGE / 64];
            inLineBits[pages] = new long[PAGE / 64];
            owners.addPage(pages, hashes[pages]);
            pages++;
        }
        return highWater++;
    }

    // ---- lookups ---------------------------------------------------------------------------------------------

    /** The node with this block hash, or NONE. */
    int findByBlockHash(long blockHash) {
        return find(blockHash, false);
    }

    /**
     * The live node of {@code node}'s parent, or NONE. A chain's blocks are created in order, so a parent is most
     * often the node just before: that one (a read next to this node's) is checked before a table probe (two or three
     * cache misses on a big index); a live node with the parent's block hash is the parent.
     */
    int parentNode(int node) {
        long parentBlockHash = parentBlockHash(node);
        int previous = node - 1;
        if (previous >= 0 && isLive(previous) && blockHash(previous) == parentBlockHash) {
            return previous;
        }
        return findByBlockHash(parentBlockHash);
    }

    /**
     * {@link #findByBlockHash} for a writer that creates the node when it is missing: a miss remembers where the
     * probe ended, so the {@link #create} that follows inserts there. Writers only (readers leave no trace).
     */
    int findToCreate(long blockHash) {
        return find(blockHash, true);
    }

    private int find(long blockHash, boolean toCreate) {
        long hash = blockHashSlot(blockHash);
        for (int i = byBlockHash.home(hash); ; i = byBlockHash.next(i)) {
            int entry = byBlockHash.at(i);
            if (entry == 0) {
                if (toCreate) {
                    byBlockHash.missedAt(hash, i);
                }
                return NONE;
            }
            if (NodeTable.mayHold(entry, hash) && blockHash(NodeTable.node(entry)) == blockHash) {
                return NodeTable.node(entry);
            }
        }
    }

    /**
     * Loads what a writer's finds of these blocks, one by one, will read, in passes of independent loads so that
     * their cache misses overlap instead of following one another: each block hash's home slot, then the node its
     * first entry names when the fingerprint agrees ({@link #prefetchSlots} and a pass over those nodes): for
     * recovery's staging, whose finds mostly hit. A live store takes {@link #prefetchSlots} alone, a remove
     * {@link #prefetchRemove}. Only the blocks {@code [from, to)} of the array.
     */
    void prefetch(long[] blockHashes, int from, int to) {
        if (!prefetchSlots(blockHashes, null, from, to, false, 0)) {
            return;
        }
        long nodeSink = 0;
        for (int i = 0; i < to - from; i++) {
            int node = homeNode(i, blockHashes[from + i]);
            if (node != NONE) {
                nodeSink += hashes[node >>> PAGE_BITS][STRIDE * (node & OFFSET_MASK) + OWNERS];
            }
        }
        prefetched += nodeSink; // a use, so the loads are kept
    }

    /**
     * The table slots of {@link #prefetch}: each block hash's home slot (into {@link #homes}) and, with
     * {@code prefixKnown}, the prefix-table slot each block would be inserted at if new, its content prefix chained
     * from {@code prefix} (the parent's, or {@link ContentPrefix#ROOT}); a wrong guess (the block exists, or exists
     * with another prefix) wastes one load. {@code localHashes} may be null when {@code !prefixKnown}. Only the
     * blocks {@code [from, to)}; false (and nothing loaded) when there are fewer than two.
     *
     * <p>A live store stops here, without loading the nodes the home slots name: on the conversation trace that pass
     * cost the writer about 7 % more CPU per write block op than it saved (ADR 0001, "Tenth round"; why, not known).
     */
    boolean prefetchSlots(long[] blockHashes, long[] localHashes, int from, int to, boolean prefixKnown, int prefix) {
        int n = to - from;
        if (n < 2) {
            return false; // nothing to overlap
        }
        if (homes.length < n) {
            homes = new int[Math.max(n, homes.length * 2)];
        }
        int sink = 0;
        for (int i = 0; i < n; i++) {
            int home = byBlockHash.home(blockHashSlot(blockHashes[from + i]));
            homes[i] = home;
            sink += byBlockHash.at(home);
        }
        if (prefixKnown) {
            for (int i = from, p = prefix; i < to; i++) {
                p = ContentPrefix.extend(p, localHashes[i]);
                sink += byPrefix.at(byPrefix.home(ContentPrefix.tableHash(p)));
            }
        }
        prefetched = sink; // a use, so the loads are kept
        return true;
    }

    /**
     * {@link #prefetchSlots} for a remove of these blocks, then the node each home slot's entry names when its
     * fingerprint agrees and that node's prefix-table slot: a remove that takes a node's last owner frees it, and the
     * free reads that slot (the prefix sits in the owner word's long).
     */
    void prefetchRemove(long[] blockHashes) {
        if (!prefetchSlots(blockHashes, null, 0, blockHashes.length, false, 0)) {
            return; // nothing to overlap (and no homes filled)
        }
        int sink = 0;
        for (int i = 0; i < blockHashes.length; i++) {
            int node = homeNode(i, blockHashes[i]);
            if (node != NONE) {
                long word = hashes[node >>> PAGE_BITS][STRIDE * (node & OFFSET_MASK) + PREFIX];
                sink += byPrefix.at(byPrefix.home(ContentPrefix.tableHash(prefixOf(word))));
            }
        }
        prefetched += sink;
    }

    /**
     * The node the entry at {@code homes[i]} ({@link #prefetchSlots}) names when its fingerprint agrees with
     * {@code blockHash}, else NONE: what a find of that block reads first.
     */
    private int homeNode(int i, long blockHash) {
        int entry = byBlockHash.at(homes[i]);
        return entry != 0 && NodeTable.mayHold(entry, blockHashSlot(blockHash)) ? NodeTable.node(entry) : NONE;
    }

    /**
     * The next node id, {@code node + 1}, when it is provably the only node the content-prefix probe could find for
     * the position after {@code node} with local hash {@code local} under {@code node}: it is in line (see
     * {@link #inLineBits}) and has that local hash; else NONE. The blocks of one {@code Stored} get consecutive ids
     * (and a chain freed tail first is handed out again in order), so a walk down a chain mostly reads the next
     * node's line, next to the last one, instead of a table slot and a node at random.
     */
    int soleNextChild(int node, long local) {
        int next = node + 1;
        return next < highWater && bit(inLineBits, next) && localHash(next) == local ? next : NONE;
    }

    /**
     * Reads what {@link #inLineRun} reads first for a walk at {@code node}: the in-line and same-owners words of the
     * node after it. The matcher issues these loads for a batch of probed nodes at once (each starts a run), where
     * their misses overlap, before its walk needs them one run after another.
     */
    long touchRun(int node) {
        int next = node + 1;
        if (next >= highWater) {
            return 0;
        }
        int page = next >>> PAGE_BITS;
        int word = (next & OFFSET_MASK) >>> 6;
        return inLineBits[page][word] + owners.sameAsPrevious(page, word);
    }

    /**
     * How many positions from {@code pos} a walk at {@code node} (matched at {@code pos - 1}) takes in line without
     * a probe and without an intersection: nodes {@code node + 1 .. node + k}, each in line (see
     * {@link #soleNextChild}), with the same owners as the node before it ({@link OwnerSets#sameAsPrevious}) and the
     * query's local hash. So workers that all hold {@code node} on a tier hold every one of them there, and each is
     * the only child the probe would find. A run of blocks that one {@code Stored} made and the same workers hold
     * (Dynamo's compressed edge) is then read as 64 bits at a time and its nodes' local hashes, one after another.
     */
    int inLineRun(int node, long[] query, int pos) {
        int first = node + 1;
        int next = first;
        int end = first + Math.min(query.length - pos, highWater - first);
        while (next < end) {
            int page = next >>> PAGE_BITS;
            int word = (next & OFFSET_MASK) >>> 6;
            int shift = next & 63;
            int ones = Long.numberOfTrailingZeros(
                    ~((inLineBits[page][word] & owners.sameAsPrevious(page, word)) >>> shift));
            int last = Math.min(next + ones, end);
            long[] fields = hashes[page];
            for (int at = STRIDE * (next & OFFSET_MASK) + LOCAL, q = pos + next - first; next < last; next++, q++) {
                if (fields[at] != query[q]) {
                    return next - first;
                }
                at += STRIDE;
            }
            if (ones < 64 - shift) {
                break; // the run ended inside this word
            }
        }
        return next - first;
    }

    /**
     * The table of resolved nodes out of line by content prefix (the prefix is its own well-mixed hash), which the
     * matcher probes: it reaches a node in line from the node before without a probe ({@link #soleNextChild}).
     */
    NodeTable probeTable() {
        return byPrefix;
    }

    /** An empty table for every resolved node by content prefix, in line or not. */
    private NodeTable everyResolvedByPrefix() {
        return new NodeTable(this::prefixKey, node -> isAllocated(node) && isResolved(node), this::highWater);
    }

    /** A node's key in the prefix tables: its content prefix's table hash. */
    private long prefixKey(int node) {
        return ContentPrefix.tableHash(prefix(node));
    }

    /**
     * Collects into {@code out} (cleared first), in node id order, every node whose parent is
     * {@code parentBlockHash} (or the root when {@code !hasParent}) and whose local hash is {@code local}: the exact
     * answer the test oracles walk with (queries use {@link PrefixMatcher}'s probes). Answered from a map of every
     * node by (parent, local), built by one scan on the first call after a change and dropped on the next change, so
     * it costs nothing where nobody asks.
     */
    void children(boolean hasParent, long parentBlockHash, long local, IntArrayList out) {
        out.clear();
        long parent = hasParent ? parentBlockHash : 0L;
        if (childIndex == null) {
            childIndex = new Long2ObjectOpenHashMap<>();
            for (int node = 0; node < highWater; node++) {
                if (isAllocated(node)) {
                    childIndex
                            .computeIfAbsent(
                                    childKey(hasParent(node), parentBlockHash(node), localHash(node)),
                                    k -> new IntArrayList(1))
                            .add(node);
                }
            }
        }
        IntArrayList nodes = childIndex.get(childKey(hasParent, parent, local));
        for (int k = 0; nodes != null && k < nodes.size(); k++) {
            int node = nodes.getInt(k);
            if (localHash(node) == local && parentBlockHash(node) == parent && hasParent(node) == hasParent) {
                out.add(node);
            }
        }
    }

    private static long childKey(boolean hasParent, long parent, long local) {
        return HashCommon.mix((hasParent ? HashCommon.mix(parent) : ContentPrefix.ROOT) * 31 + local);
    }

    private static long blockHashSlot(long blockHash) {
        return HashCommon.mix(blockHash);
    }

    private static boolean bit(long[][] bits, int node) {
        return (bits[node >>> PAGE_BITS][(node & OFFSET_MASK) >>> 6] & 1L << node) != 0;
    }

    /** Sets one node's bit in paged bit words ({@link OwnerSets}' same-owners bits use it too). */
    static void setBit(long[][] bits, int node, boolean value) {
        long[] page = bits[node >>> PAGE_BITS];
        int word = (node & OFFSET_MASK) >>> 6;
        long was = page[word];
        long now = value ? was | 1L << node : was & ~(1L << node);
        if (now != was) {
            page[word] = now; // a write that changes nothing would still take the line from a reader's core
        }
    }
}
