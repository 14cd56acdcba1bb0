"""A group consumer of one topic, in the Python client named on the command line, that prints what it got:
the name of the first error it is given (TOPIC_AUTHORIZATION_FAILED, say), READ if a record arrives, or
NOTHING when neither happens within the wait. Its settings (JSON on stdin) are the client's own, plus
"topic" and "wait_s".

  confluent     confluent-kafka (librdkafka); errors come as messages with .error() from poll
  kafka-python  kafka-python (Debian python3-kafka 2.0.2); errors are raised from the iterator
"""
import json
import sys


def confluent(cfg, topic, wait_s):
    from confluent_kafka import Consumer
    c = Consumer(dict(cfg, **{'auto.offset.reset': 'earliest', 'enable.auto.commit': False}))
    c.subscribe([topic])
    try:
        for _ in range(wait_s):
            m = c.poll(1)
            if m is None:
                continue
            return m.error().name() if m.error() else 'READ'
        return 'NOTHING'
    finally:
        c.close()


def kafka_python(cfg, topic, wait_s):
    from kafka import KafkaConsumer
    from kafka.errors import KafkaError
    c = KafkaConsumer(topic, auto_offset_reset='earliest', enable_auto_commit=False, consumer_timeout_ms=wait_s * 1000, **cfg)
    try:
        for _ in c:
            return 'READ'
        return 'NOTHING'
    except KafkaError as e:
        # The error classes carry Kafka's name for their code (TopicAuthorizationFailedError.message).
        return e.message
    finally:
        c.close()


def main():
    cfg = json.loads(sys.stdin.read())
    topic = cfg.pop('topic')
    wait_s = cfg.pop('wait_s')
    run = {'confluent': confluent, 'kafka-python': kafka_python}[sys.argv[1]]
    print(run(cfg, topic, wait_s))


if __name__ == '__main__':
    main()
