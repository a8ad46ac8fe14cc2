# Many engine ranks in one process, each a real libzmq publisher (pyzmq, as vLLM publishes), for FleetBench.
# Driven over stdin/stdout like EngineFleetMain (one line each):
#   args:  ENGINES BLOCK_SIZE [SNDHWM]   (SNDHWM: the sockets' send high-water mark; 0 = none; default libzmq's 1000)
#   out:   ENGINE i ENDPOINT - (one per engine), then READY
#   in:    subscribed      out: SUBSCRIBED n   (engines whose socket got a subscription)
#   in:    publish K       out: PUBLISHED K    (each engine stores one block: the tokens of EngineFleetMain.tokens(K, i, B))
#   in:    prepare N B     out: PREPARED N     (encodes N batches of B blocks per engine, before any clock)
#   in:    burst           out: BURST N        (sends what prepare encoded, all engines round-robin)
#   in:    pace N B R      out: PACED N S      (N rounds of one batch of B blocks per engine; engine i's batch of round k
#                                               at S + (k + i / ENGINES) / R s, S in epoch ms)
#   in:    load PATH       out: LOADED n       (n messages encoded by FleetCompare: each a u32 engine, a u32 length and
#                                               the payload, in send order; nothing is encoded after this)
#   in:    send            out: SENT n CPU_S   (sends what load read, as fast as the sockets take it; CPU_S: this
#                                               process's CPU seconds, all threads, while sending)
#   in:    send R          out: SENT n CPU_S START_MS  (the same paced: message m at START + m / R s, START in epoch ms;
#                                               PATH.sent then holds when each send call returned: a big-endian
#                                               i64 of epoch microseconds per message)
#   in:    quit
# XPUB rather than PUB only so that a subscription can be seen; what goes out is the same.
import array, math, struct, sys, time

import msgpack
import zmq

engines, block_size = int(sys.argv[1]), int(sys.argv[2])
hwm = int(sys.argv[3]) if len(sys.argv) > 3 else 1000
context = zmq.Context(1)
context.set(zmq.MAX_SOCKETS, engines + 64)
sockets, seqs, subscribed = [], [0] * engines, [False] * engines
for i in range(engines):
    s = context.socket(zmq.XPUB)
    s.setsockopt(zmq.LINGER, 0)
    s.setsockopt(zmq.SNDHWM, hwm)
    port = s.bind_to_random_port("tcp://127.0.0.1")
    sockets.append(s)
    print("ENGINE %d tcp://127.0.0.1:%d -" % (i, port))
print("READY", flush=True)


def tokens(round_, engine, count):
    base = round_ * 1_000_000 + engine * count
    return list(range(base, base + count))


def batch(round_, engine, blocks):
    hashes = [((round_ + 1) << 40) | (engine << 16) | j for j in range(blocks)]
    stored = {"type": "BlockStored", "block_hashes": hashes, "parent_block_hash": None,
              "token_ids": tokens(round_, engine, blocks * block_size), "block_size": block_size,
              "lora_id": None, "medium": "GPU", "lora_name": None}
    return msgpack.packb([time.time(), [stored], 0])


def send(engine, payload):
    sockets[engine].send_multipart([b"", struct.pack(">Q", seqs[engine]), payload])
    seqs[engine] += 1


def load(path):
    out = []
    with open(path, "rb") as f:
        data = f.read()
    view, at = memoryview(data), 0
    while at < len(data):
        engine, length = struct.unpack_from(">II", data, at)
        out.append((engine, view[at + 8:at + 8 + length]))
        at += 8 + length
    return out


prepared, loaded = [], []
for line in sys.stdin:
    cmd = line.split()
    if cmd[0] == "subscribed":
        for i, s in enumerate(sockets):
            while s.poll(0):
                s.recv()
                subscribed[i] = True
        print("SUBSCRIBED %d" % sum(subscribed), flush=True)
    elif cmd[0] == "publish":
        k = int(cmd[1])
        for i in range(engines):
            send(i, batch(k, i, 1))
        print("PUBLISHED %d" % k, flush=True)
    elif cmd[0] == "prepare":
        n, blocks = int(cmd[1]), int(cmd[2])
        prepared = [[batch(1000 + k, i, blocks) for i in range(engines)] for k in range(n)]
        print("PREPARED %d" % n, flush=True)
    elif cmd[0] == "burst":
        for round_ in prepared:
            for i in range(engines):
                send(i, round_[i])
        print("BURST %d" % len(prepared), flush=True)
    elif cmd[0] == "pace":
        n, blocks, rate = int(cmd[1]), int(cmd[2]), float(cmd[3])
        rounds = [[batch(2000 + k, i, blocks) for i in range(engines)] for k in range(n)]
        start = time.time() + 0.1
        for k in range(n):
            for i in range(engines):  # spread over the round: engine i at (k + i / engines) / R
                wait = start + (k + i / engines) / rate - time.time()
                if wait > 0:
                    time.sleep(wait)
                send(i, rounds[k][i])
        print("PACED %d %d" % (n, int(start * 1000)), flush=True)
    elif cmd[0] == "load":
        loaded_path = cmd[1]
        loaded = load(loaded_path)
        print("LOADED %d" % len(loaded), flush=True)
    elif cmd[0] == "send":
        rate = float(cmd[1]) if len(cmd) > 1 else 0
        cpu = time.process_time()
        # paced: on a whole millisecond, so that START_MS is the schedule exactly (the lags are read in µs)
        start = math.ceil((time.time() + 0.1) * 1000) / 1000 if rate > 0 else time.time()
        sent_at = array.array("q")
        for m, (engine, payload) in enumerate(loaded):
            if rate > 0:
                wait = start + m / rate - time.time()
                if wait > 0:
                    time.sleep(wait)
            send(engine, payload)
            if rate > 0:
                sent_at.append(int(time.time() * 1e6))
        if rate > 0:  # when each message's send returned: a send behind schedule is the publisher's delay
            if sys.byteorder == "little":
                sent_at.byteswap()
            with open(loaded_path + ".sent", "wb") as f:
                sent_at.tofile(f)
        print("SENT %d %.3f %d" % (len(loaded), time.process_time() - cpu, round(start * 1000)), flush=True)
    elif cmd[0] == "quit":
        break
