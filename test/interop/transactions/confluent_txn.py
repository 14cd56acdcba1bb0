"""confluent-kafka (librdkafka) transactions against Floe, for test/interop/transactions/confluent.test.ts.

    confluent_txn.py produce BOOTSTRAP TOPIC TXN_ID SEED COUNT
        COUNT transactions of 1-4 records each (keys t<n>-<i>); a seeded random third abort, the last
        commits and writes every partition. Prints {"committed": [...keys], "aborted": [...keys]}.
    confluent_txn.py read BOOTSTRAP TOPIC ISOLATION
        Reads TOPIC from the beginning up to its end offsets (the LSO with read_committed, as librdkafka
        asks ListOffsets for it) and prints the keys as a JSON list.
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
    else:
        read(sys.argv[2], sys.argv[3], sys.argv[4])
