"""confluent-kafka (librdkafka) transactions against Floe, for test/interop/transactions/confluent.test.ts.

    confluent_txn.py produce BOOTSTRAP TOPIC TXN_ID SEED COUNT
        COUNT transactions of 1-4 records each (keys t<n>-<i>); a seeded random third abort, the last
        commits and writes every partition. Prints {"committed": [...keys], "aborted": [...keys]}.
    confluent_txn.py read BOOTSTRAP TOPIC ISOLATION
        Reads TOPIC from the beginning up to its end offsets (the LSO with read_committed, as librdkafka
        asks ListOffsets for it) and prints the keys as a JSON list.
    confluent_txn.py loop BOOTSTRAP INPUT OUTPUT GROUP TXN_ID ABORT_RATE SEED
        Consume-transform-produce, for test/interop/transactions/confluent-kill.test.ts: reads INPUT
        (read_committed, group GROUP), writes key -> b"value|VALUE" to OUTPUT in a transaction together with
        the consumed offsets (send_offsets_to_transaction), aborts a seeded random ABORT_RATE of the
        transactions (and seeks back to where the aborted one began), and exits 0 once the group's committed
        offsets reach the end of INPUT, printing {"committed": n, "aborted": m}. Restartable with the same
        TXN_ID: init_transactions fences the previous run and aborts what it left open. Any error (fenced by
        a broker restart, retries exhausted while the broker is down) ends it with a traceback and a
        non-zero exit; the test restarts it.
"""
import json
import random
import sys
import uuid

from confluent_kafka import Consumer, Producer, TopicPartition


def produce(bootstrap, topic, txn_id, seed, count):
    rnd = random.Random(seed)
    p = Producer({"bootstrap.servers": bootstrap, "transactional.id": txn_id, "linger.ms": 0})
    p.init_transactions(30)
    partitions = len(p.list_topics(topic, timeout=10).topics[topic].partitions)
    committed, aborted = [], []
    for n in range(count):
        last = n == count - 1
        keys = [f"t{n}-{i}" for i in range(partitions if last else rnd.randint(1, 4))]
        p.begin_transaction()
        for i, key in enumerate(keys):
            p.produce(topic, key=key, value=f"v-{key}", partition=i if last else rnd.randrange(partitions))
        p.flush(30)
        if not last and rnd.random() < 0.33:
            p.abort_transaction(30)
            aborted += keys
        else:
            p.commit_transaction(30)
            committed += keys
    print(json.dumps({"committed": committed, "aborted": aborted}))


# librdkafka 2.16's default metadata.recovery.strategy, rebootstrap, fails this loop when its only broker is
# killed: the re-bootstrap decommissions the learned broker (NodeId 1), whose thread then never finishes
# terminating (debug=broker logs "Handle is terminating in state INIT: 2 refcnts" about once a millisecond,
# forever), and once the broker is back the output partitions join that dead handle, so
# send_offsets_to_transaction(..., 30) was still blocked 40 s later (faulthandler stack) with 7 messages
# queued and never sent. With "none" the learned broker is kept and reconnects when the broker returns, as
# the Java client and kafkajs do. The hang came in each of 4 runs with rebootstrap, never with none.
RECOVERY = {"metadata.recovery.strategy": "none"}


def loop(bootstrap, input_topic, output, group, txn_id, abort_rate, seed):
    rnd = random.Random(seed)
    c = Consumer({
        **RECOVERY,
        "bootstrap.servers": bootstrap,
        "group.id": group,
        "isolation.level": "read_committed",
        "enable.auto.commit": False,
        "auto.offset.reset": "earliest",
        # A member killed with kill -9 leaves the group within seconds (the default is 45 s).
        "session.timeout.ms": 6000,
        "heartbeat.interval.ms": 1000,
        # The whole input is prefetched, so a fetch is always parked at its end for fetch.wait.max.ms, and a
        # seek after an abort waits for it: with the default 500 ms the loop spent three quarters of its time
        # there, outside any transaction, and the broker kills rarely hit an open one.
        "fetch.wait.max.ms": 50,
    })
    p = Producer({**RECOVERY, "bootstrap.servers": bootstrap, "transactional.id": txn_id, "linger.ms": 0})
    p.init_transactions(30)
    meta = c.list_topics(input_topic, timeout=10).topics[input_topic]
    tps = [TopicPartition(input_topic, n) for n in meta.partitions]
    end = {tp.partition: c.get_watermark_offsets(tp, timeout=10)[1] for tp in tps}

    def reached():
        done = {tp.partition: tp.offset for tp in c.committed(tps, timeout=10)}
        return all(end[n] == 0 or done[n] >= end[n] for n in end)

    c.subscribe([input_topic])
    committed = aborted = 0
    while not reached():
        msgs = [m for m in c.consume(7, 0.2) if m.error() is None]
        if not msgs:
            continue
        first, nxt = {}, {}
        p.begin_transaction()
        for m in msgs:
            p.produce(output, key=m.key(), value=m.value() + b"|" + m.value().upper())
            first.setdefault(m.partition(), m.offset())
            nxt[m.partition()] = m.offset() + 1
        p.send_offsets_to_transaction([TopicPartition(input_topic, n, o) for n, o in nxt.items()], c.consumer_group_metadata(), 30)
        if rnd.random() < abort_rate:
            p.abort_transaction(30)
            aborted += 1
            # Back to where the aborted transaction began: everything before it in those partitions committed.
            for n, o in first.items():
                c.seek(TopicPartition(input_topic, n, o))
        else:
            p.commit_transaction(30)
            committed += 1
    c.close()
    print(json.dumps({"committed": committed, "aborted": aborted}))


def read(bootstrap, topic, isolation):
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": f"verify-{uuid.uuid4()}", "isolation.level": isolation, "enable.auto.commit": False})
    meta = c.list_topics(topic, timeout=10).topics[topic]
    tps = [TopicPartition(topic, p, 0) for p in meta.partitions]
    ends = {tp.partition: c.get_watermark_offsets(tp, timeout=10)[1] for tp in tps}
    c.assign(tps)
    keys = []
    while True:
        positions = {tp.partition: tp.offset for tp in c.position(tps)}
        if all(positions[p] >= ends[p] or (positions[p] < 0 and ends[p] == 0) for p in ends):
            break
        msg = c.poll(0.2)
        if msg is None or msg.error():
            continue
        keys.append(msg.key().decode())
    c.close()
    print(json.dumps(keys))


if __name__ == "__main__":
    if sys.argv[1] == "produce":
        produce(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]), int(sys.argv[6]))
    elif sys.argv[1] == "loop":
        loop(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5], sys.argv[6], float(sys.argv[7]), int(sys.argv[8]))
    else:
        read(sys.argv[2], sys.argv[3], sys.argv[4])
