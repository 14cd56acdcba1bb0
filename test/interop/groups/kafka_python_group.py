"""Consumer-group driver for kafka-python (Debian python3-kafka 2.0), run with /usr/bin/python3.

  kafka_python_group.py member '<json>'  a group member: subscribes, prints each polled record as a JSON line,
                                         commits what it polled synchronously and prints the acknowledged
                                         commits (member-process.ts has the line format); on SIGTERM it closes
                                         (commits, leaves) and prints closed.
  kafka_python_group.py admin '<json>'   prints one JSON line: the group as KafkaAdminClient sees it
                                         (list_consumer_groups, describe_consumer_groups,
                                         list_consumer_group_offsets), with end offsets from a KafkaConsumer.
"""
import json
import signal
import sys

from kafka import KafkaAdminClient, KafkaConsumer, OffsetAndMetadata, TopicPartition
from kafka.errors import KafkaError


def emit(obj):
    sys.stdout.write(json.dumps(obj) + '\n')
    sys.stdout.flush()


def member(cfg):
    c = KafkaConsumer(
        cfg['topic'],
        bootstrap_servers=cfg['bootstrap'],
        group_id=cfg['group'],
        client_id=cfg['name'],
        session_timeout_ms=cfg['sessionTimeoutMs'],
        heartbeat_interval_ms=cfg['heartbeatIntervalMs'],
        auto_offset_reset='earliest',
        enable_auto_commit=False,
        api_version_auto_timeout_ms=15000,
    )
    stopping = []
    signal.signal(signal.SIGTERM, lambda *_: stopping.append(True))
    while not stopping:
        polled = c.poll(timeout_ms=200)
        offsets = {}
        for tp, records in polled.items():
            for r in records:
                emit({'e': 'record', 'p': r.partition, 'o': r.offset, 'k': r.key.decode()})
                offsets[tp] = OffsetAndMetadata(r.offset + 1, '')
        if not offsets:
            continue
        try:
            c.commit(offsets)
            for tp, om in offsets.items():
                emit({'e': 'commit', 'p': tp.partition, 'o': om.offset})
        except KafkaError as e:
            emit({'e': 'commit_error', 'error': repr(e)})
    c.close()
    emit({'e': 'closed'})


def admin(cfg):
    a = KafkaAdminClient(bootstrap_servers=cfg['bootstrap'], request_timeout_ms=15000)
    listed = [g for g, _ in a.list_consumer_groups()]
    (g,) = a.describe_consumer_groups([cfg['group']])
    offsets = a.list_consumer_group_offsets(cfg['group'])
    a.close()
    tps = [TopicPartition(cfg['topic'], p) for p in range(cfg['partitions'])]
    c = KafkaConsumer(bootstrap_servers=cfg['bootstrap'], group_id=None, enable_auto_commit=False, api_version_auto_timeout_ms=15000)
    ends = c.end_offsets(tps)
    c.close()
    committed = [offsets[tp].offset if tp in offsets else -1 for tp in tps]
    members = []
    for m in g.members:
        parts = []
        # describe_consumer_groups decodes consumer-protocol assignments into (topic, [partitions]) pairs
        for topic, ps in m.member_assignment.assignment if m.member_assignment else []:
            if topic == cfg['topic']:
                parts.extend(ps)
        members.append({'clientId': m.client_id, 'partitions': sorted(parts)})
    emit({
        'listed': listed,
        'state': g.state,
        'members': members,
        'committed': committed,
        'lag': [ends[tp] - off for tp, off in zip(tps, committed)],
    })


if __name__ == '__main__':
    {'member': member, 'admin': admin}[sys.argv[1]](json.loads(sys.argv[2]))
