"""Interop driver for confluent-kafka-python (librdkafka). Reads one JSON command on stdin, prints one JSON
result on stdout. Keys, values and header values are base64 so the caller can compare bytes exactly.

Commands: create_topic, partition_count, produce, consume, list_offset, delete_topic (see interop/clients/python.ts).
"""
import base64
import json
import os
import sys

from confluent_kafka import Consumer, KafkaError, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

CODECS = ['none', 'gzip', 'snappy', 'lz4', 'zstd']


def b64(b):
    return None if b is None else base64.b64encode(b).decode('ascii')


def unb64(s):
    return None if s is None else base64.b64decode(s)


def fail(msg):
    sys.stderr.write(msg + '\n')
    sys.exit(1)


def admin(cmd):
    return AdminClient({'bootstrap.servers': cmd['bootstrap']})


def create_topic(cmd):
    a = admin(cmd)  # keep a reference: a collected client cancels its futures
    futures = a.create_topics([NewTopic(cmd['topic'], num_partitions=cmd['partitions'], replication_factor=1)])
    futures[cmd['topic']].result(15)
    return {}


def delete_topic(cmd):
    a = admin(cmd)
    futures = a.delete_topics([cmd['topic']], operation_timeout=15)
    futures[cmd['topic']].result(15)
    return {}


def partition_count(cmd):
    md = admin(cmd).list_topics(timeout=15)
    t = md.topics.get(cmd['topic'])
    return {'count': None if t is None or t.error is not None else len(t.partitions)}


def produce(cmd):
    conf = {'bootstrap.servers': cmd['bootstrap'], 'compression.type': cmd['codec'], 'linger.ms': 5,
            'acks': 'all' if cmd['acks'] == -1 else '1', 'enable.idempotence': bool(cmd['idempotent'])}
    p = Producer(conf)
    offsets = [None] * len(cmd['records'])
    errors = []

    def report(i):
        def cb(err, msg):
            if err is not None:
                errors.append('record %d: %s' % (i, err))
            else:
                offsets[i] = msg.offset()
        return cb

    for i, r in enumerate(cmd['records']):
        kw = {'key': unb64(r['key']), 'value': unb64(r['value']), 'partition': r['partition'],
              'headers': [(k, unb64(v)) for k, v in r['headers']], 'on_delivery': report(i)}
        if r.get('timestamp') is not None:
            kw['timestamp'] = r['timestamp']
        p.produce(cmd['topic'], **kw)
    left = p.flush(15)
    if left or errors:
        fail('%d records undelivered; errors: %s' % (left, errors))
    return {'offsets': offsets}


def consumer(cmd, **extra):
    conf = {'bootstrap.servers': cmd['bootstrap'], 'group.id': 'interop-unused', 'enable.auto.commit': False,
            'enable.partition.eof': True}
    conf.update(extra)
    return Consumer(conf)


def consume(cmd):
    c = consumer(cmd)
    c.assign([TopicPartition(cmd['topic'], cmd['partition'], cmd['offset'])])
    out = []
    try:
        while len(out) < cmd['count']:
            m = c.poll(10)
            if m is None:
                fail('no record or end of partition within 10 s after %d records' % len(out))
            if m.error() is not None:
                if m.error().code() == KafkaError._PARTITION_EOF:
                    break
                fail('consume error: %s' % m.error())
            _, ts = m.timestamp()
            out.append({'partition': m.partition(), 'offset': m.offset(), 'key': b64(m.key()), 'value': b64(m.value()),
                        'headers': [[k, b64(v)] for k, v in (m.headers() or [])], 'timestamp': ts})
    finally:
        c.close()
    return {'records': out}


def list_offset(cmd):
    c = consumer(cmd)
    try:
        q = cmd['query']
        if q in ('earliest', 'latest'):
            low, high = c.get_watermark_offsets(TopicPartition(cmd['topic'], cmd['partition']), timeout=15, cached=False)
            return {'offset': low if q == 'earliest' else high}
        res = c.offsets_for_times([TopicPartition(cmd['topic'], cmd['partition'], q['timestamp'])], timeout=15)
        if res[0].error is not None:
            fail('offsets_for_times: %s' % res[0].error)
        return {'offset': res[0].offset}
    finally:
        c.close()


def capabilities(_cmd):
    return {'codecs': CODECS}


OPS = {'create_topic': create_topic, 'delete_topic': delete_topic, 'partition_count': partition_count,
       'produce': produce, 'consume': consume, 'list_offset': list_offset, 'capabilities': capabilities}

if __name__ == '__main__':
    command = json.load(sys.stdin)
    print(json.dumps(OPS[command['op']](command)))
    sys.stdout.flush()
    # confluent-kafka-python 1.7 drops one reference to None too many for every null header value it hands
    # out (Message.headers()), and the interpreter aborts at exit with "none_dealloc: deallocating None".
    # The result is already printed; leave without running the finalizers.
    os._exit(0)
