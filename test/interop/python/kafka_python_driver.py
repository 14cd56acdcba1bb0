"""Interop driver for kafka-python. Reads one JSON command on stdin, prints one JSON result on stdout. Keys,
values and header values are base64 so the caller can compare bytes exactly.

kafka-python compresses with gzip always, and with snappy, lz4 and zstd only when python-snappy, lz4 and
zstandard are importable; `capabilities` reports what this machine really has. Its 2.0 line has no idempotent
producer.
"""
import base64
import json
import logging
import sys

from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import NewTopic
from kafka import codec as kcodec

logging.basicConfig(level=logging.CRITICAL)


def b64(b):
    return None if b is None else base64.b64encode(b).decode('ascii')


def unb64(s):
    return None if s is None else base64.b64decode(s)


def fail(msg):
    sys.stderr.write(msg + '\n')
    sys.exit(1)


def codecs():
    out = ['none', 'gzip']
    if kcodec.has_snappy():
        out.append('snappy')
    if kcodec.has_lz4():
        out.append('lz4')
    if kcodec.has_zstd():
        out.append('zstd')
    return out


def admin(cmd):
    return KafkaAdminClient(bootstrap_servers=cmd['bootstrap'], request_timeout_ms=15000)


def create_topic(cmd):
    a = admin(cmd)
    try:
        res = a.create_topics([NewTopic(cmd['topic'], num_partitions=cmd['partitions'], replication_factor=1)])
        for t, code, msg in res.topic_errors:
            if code != 0:
                fail('create_topics %s: error %d %s' % (t, code, msg))
    finally:
        a.close()
    return {}


def delete_topic(cmd):
    a = admin(cmd)
    try:
        res = a.delete_topics([cmd['topic']], timeout_ms=15000)
        for t, code in res.topic_error_codes:
            if code != 0:
                fail('delete_topics %s: error %d' % (t, code))
    finally:
        a.close()
    return {}


def consumer(cmd):
    return KafkaConsumer(bootstrap_servers=cmd['bootstrap'], group_id=None, enable_auto_commit=False,
                         request_timeout_ms=15000, api_version_auto_timeout_ms=15000)


def partition_count(cmd):
    c = consumer(cmd)
    try:
        parts = c.partitions_for_topic(cmd['topic'])
        return {'count': None if parts is None else len(parts)}
    finally:
        c.close()


def produce(cmd):
    codec = None if cmd['codec'] == 'none' else cmd['codec']
    p = KafkaProducer(bootstrap_servers=cmd['bootstrap'], compression_type=codec, linger_ms=5,
                      acks='all' if cmd['acks'] == -1 else 1, retries=0)
    try:
        futures = []
        for r in cmd['records']:
            futures.append(p.send(cmd['topic'], key=unb64(r['key']), value=unb64(r['value']), partition=r['partition'],
                                  headers=[(k, unb64(v)) for k, v in r['headers']], timestamp_ms=r.get('timestamp')))
        p.flush(15)
        return {'offsets': [f.get(timeout=15).offset for f in futures]}
    finally:
        p.close(5)


def consume(cmd):
    c = consumer(cmd)
    tp = TopicPartition(cmd['topic'], cmd['partition'])
    c.assign([tp])
    c.seek(tp, cmd['offset'])
    end = c.end_offsets([tp])[tp]
    out = []
    try:
        polls = 0
        while len(out) < cmd['count'] and c.position(tp) < end:
            polls += 1
            if polls > 100:
                fail('only %d records after 100 polls' % len(out))
            for m in c.poll(timeout_ms=200).get(tp, []):
                if len(out) < cmd['count']:
                    out.append({'partition': m.partition, 'offset': m.offset, 'key': b64(m.key), 'value': b64(m.value),
                                'headers': [[k, b64(v)] for k, v in m.headers], 'timestamp': m.timestamp})
    finally:
        c.close()
    return {'records': out}


def list_offset(cmd):
    c = consumer(cmd)
    tp = TopicPartition(cmd['topic'], cmd['partition'])
    try:
        q = cmd['query']
        if q == 'earliest':
            return {'offset': c.beginning_offsets([tp])[tp]}
        if q == 'latest':
            return {'offset': c.end_offsets([tp])[tp]}
        found = c.offsets_for_times({tp: q['timestamp']})[tp]
        return {'offset': -1 if found is None else found.offset}
    finally:
        c.close()


def capabilities(_cmd):
    return {'codecs': codecs()}


OPS = {'create_topic': create_topic, 'delete_topic': delete_topic, 'partition_count': partition_count,
       'produce': produce, 'consume': consume, 'list_offset': list_offset, 'capabilities': capabilities}

if __name__ == '__main__':
    command = json.load(sys.stdin)
    print(json.dumps(OPS[command['op']](command)))
