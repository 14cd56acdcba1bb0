"""Consumer-group driver for confluent-kafka-python (librdkafka), run with /usr/bin/python3.

  confluent_group.py member '<json>'  a group member: subscribes, prints each record as a JSON line, commits it
                                      synchronously and prints the acknowledged commit (member-process.ts has
                                      the line format); on SIGTERM it closes (commits, leaves) and prints closed.
                                      With "reportAssignments" it also prints `assigned` (partitions and its
                                      member id) at every rebalance.
  confluent_group.py admin '<json>'   prints one JSON line: the group as this client's admin API sees it.

confluent-kafka 1.7 (Debian's) has no list_consumer_groups / describe_consumer_groups /
list_consumer_group_offsets (they came in 1.9/2.0). Its admin API for groups is AdminClient.list_groups, which
lists and describes (ListGroups + DescribeGroups); committed offsets and end offsets come from a Consumer of
the group that does not subscribe (OffsetFetch via committed(), ListOffsets via get_watermark_offsets()).
"""
import json
import signal
import struct
import sys

from confluent_kafka import Consumer, KafkaException, TopicPartition
from confluent_kafka.admin import AdminClient


def emit(obj):
    sys.stdout.write(json.dumps(obj) + '\n')
    sys.stdout.flush()


def member(cfg):
    c = Consumer({
        'bootstrap.servers': cfg['bootstrap'],
        'group.id': cfg['group'],
        'client.id': cfg['name'],
        'session.timeout.ms': cfg['sessionTimeoutMs'],
        'heartbeat.interval.ms': cfg['heartbeatIntervalMs'],
        'auto.offset.reset': 'earliest',
        'enable.auto.commit': False,
    })
    stopping = []
    signal.signal(signal.SIGTERM, lambda *_: stopping.append(True))
    if cfg.get('reportAssignments'):
        # Every rebalance calls on_assign (eager protocols), so its lines count the rebalances this member saw.
        def on_assign(consumer, partitions):
            line = {'e': 'assigned', 'partitions': sorted(tp.partition for tp in partitions)}
            if hasattr(consumer, 'memberid'):  # not in Debian's confluent-kafka 1.7
                line['memberId'] = consumer.memberid()
            emit(line)
        c.subscribe([cfg['topic']], on_assign=on_assign)
    else:
        c.subscribe([cfg['topic']])
    while not stopping:
        msg = c.poll(0.2)
        if msg is None or msg.error() is not None:
            continue
        emit({'e': 'record', 'p': msg.partition(), 'o': msg.offset(), 'k': msg.key().decode()})
        try:
            for tp in c.commit(message=msg, asynchronous=False):
                if tp.error is not None:
                    emit({'e': 'commit_error', 'error': str(tp.error)})
                else:
                    emit({'e': 'commit', 'p': tp.partition, 'o': tp.offset})
        except KafkaException as e:
            emit({'e': 'commit_error', 'error': str(e)})
    c.close()
    emit({'e': 'closed'})


def assigned_partitions(assignment, topic):
    """Partitions of `topic` in a ConsumerProtocolAssignment (int16 version, [string topic, [int32]])."""
    if len(assignment) < 6:
        return []
    pos = 2
    (ntopics,) = struct.unpack_from('>i', assignment, pos)
    pos += 4
    out = []
    for _ in range(ntopics):
        (n,) = struct.unpack_from('>h', assignment, pos)
        name = assignment[pos + 2:pos + 2 + n].decode()
        pos += 2 + n
        (count,) = struct.unpack_from('>i', assignment, pos)
        pos += 4
        parts = list(struct.unpack_from('>%di' % count, assignment, pos))
        pos += 4 * count
        if name == topic:
            out.extend(parts)
    return sorted(out)


def admin(cfg):
    a = AdminClient({'bootstrap.servers': cfg['bootstrap']})
    groups = a.list_groups(timeout=15)
    g = next(x for x in groups if x.id == cfg['group'])
    if g.error is not None:
        raise RuntimeError('list_groups: %s' % g.error)
    c = Consumer({'bootstrap.servers': cfg['bootstrap'], 'group.id': cfg['group'], 'enable.auto.commit': False})
    tps = [TopicPartition(cfg['topic'], p) for p in range(cfg['partitions'])]
    committed = [tp.offset if tp.offset >= 0 else -1 for tp in c.committed(tps, timeout=15)]
    ends = [c.get_watermark_offsets(tp, timeout=15)[1] for tp in tps]
    c.close()
    emit({
        'listed': [x.id for x in groups],
        'state': g.state,
        'members': [{'clientId': m.client_id, 'partitions': assigned_partitions(m.assignment, cfg['topic'])} for m in g.members],
        'committed': committed,
        'lag': [end - off for end, off in zip(ends, committed)],
    })


if __name__ == '__main__':
    {'member': member, 'admin': admin}[sys.argv[1]](json.loads(sys.argv[2]))
