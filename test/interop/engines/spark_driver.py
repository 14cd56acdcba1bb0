"""Spark SQL driver for the engine tests (test/interop/engines/spark.ts): one local Spark session (one JVM) that
answers JSON commands, one per line on stdin, with one JSON line each on stdout.

Started as `python spark_driver.py '<json: {"conf": {key: value}}>'`: the session's settings, including
spark.jars (Iceberg's runtime and AWS bundle as local files, never downloaded here). It prints {"ready": ...}
once the session runs. Commands:

  {"op": "conf", "conf": {key: value}}   sets runtime settings (a catalog is read when first used, so its
                                          spark.sql.catalog.* settings may arrive after start)
  {"op": "sql", "query": "..."}          runs one statement; answers {"columns": [...], "rows": [[...], ...]}

Values: binary as {"b64": "..."}, timestamps as {"us": <microseconds since the epoch>}, dates and decimals as
strings, structs as objects, maps as lists of [key, value], so the caller can compare bytes and instants
exactly. A failing command answers {"error": "<message>"} and the session stays up. Everything Spark logs goes
to stderr; stdout carries only the answers.
"""
import base64
import calendar
import datetime
import decimal
import json
import os
import sys
import time

os.environ['TZ'] = 'UTC'
time.tzset()
# Answers go to a private copy of stdout; fd 1 becomes stderr, so nothing the JVM (which inherits it) prints
# can fall between two answers.
ANSWERS = os.fdopen(os.dup(1), 'w')
os.dup2(2, 1)

from pyspark.sql import Row, SparkSession  # noqa: E402 (TZ must be set before Spark converts timestamps)


def encode(v):
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    if isinstance(v, (bytes, bytearray)):
        return {'b64': base64.b64encode(bytes(v)).decode('ascii')}
    if isinstance(v, datetime.datetime):
        # Spark hands timestamps to Python as naive datetimes in the process's zone, UTC here.
        return {'us': calendar.timegm(v.utctimetuple()) * 1_000_000 + v.microsecond}
    if isinstance(v, (datetime.date, decimal.Decimal)):
        return str(v)
    if isinstance(v, Row):
        return {k: encode(x) for k, x in v.asDict(recursive=False).items()}
    if isinstance(v, dict):
        return [[encode(k), encode(x)] for k, x in v.items()]
    if isinstance(v, (list, tuple)):
        return [encode(x) for x in v]
    raise TypeError('cannot encode %r' % type(v))


def answer(obj):
    ANSWERS.write(json.dumps(obj) + '\n')
    ANSWERS.flush()


def main():
    settings = json.loads(sys.argv[1])
    builder = SparkSession.builder.master('local[2]').appName('floe-engine-tests')
    for k, v in settings['conf'].items():
        builder = builder.config(k, v)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel('WARN')
    # One small job before answering, so the JVM's first planning and code generation overlap with the
    # caller's own set-up instead of the first real query.
    spark.sql('SELECT count(*) FROM range(10)').collect()
    answer({'ready': True, 'spark': spark.version})
    for line in sys.stdin:
        if not line.strip():
            continue
        cmd = json.loads(line)
        try:
            if cmd['op'] == 'conf':
                for k, v in cmd['conf'].items():
                    spark.conf.set(k, v)
                answer({})
            elif cmd['op'] == 'sql':
                df = spark.sql(cmd['query'])
                answer({'columns': df.columns, 'rows': [[encode(x) for x in r] for r in df.collect()]})
            else:
                answer({'error': 'unknown op %r' % cmd['op']})
        except Exception as e:  # noqa: BLE001 (every failure goes back to the caller, the session stays)
            answer({'error': '%s: %s' % (type(e).__name__, e)})
    spark.stop()


if __name__ == '__main__':
    main()
