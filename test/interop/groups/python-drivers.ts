/**
 * The Python clients as group drivers: each member and each admin call is a Python process running one of the
 * scripts beside this file (confluent_group.py, kafka_python_group.py), with the interpreter that has the
 * client (see clients/python.ts: Debian's for librdkafka 2.0 and kafka-python, the peers' venv for
 * confluent-kafka 2.x from PyPI).
 */
import { fileURLToPath } from 'node:url';
import { pythonFor, type PythonClientKind } from '../clients/python.js';
import { ChildRunner } from '../clients/process.js';
import { MemberProcess } from './member-process.js';
import type { AdminGroupView, GroupClientDriver } from './scenario.js';

export function pythonGroupDriver(name: PythonClientKind, runner: ChildRunner): GroupClientDriver {
  const script = fileURLToPath(new URL(name === 'kafka-python' ? './kafka_python_group.py' : './confluent_group.py', import.meta.url));
  const PYTHON = pythonFor(name);
  return {
    name,
    startMember: (o) => new MemberProcess(o.name, PYTHON, [script, 'member', JSON.stringify(o)]),
    admin: async (bootstrap, group, topic, partitions) => {
      const { stdout } = await runner.run(PYTHON, [script, 'admin', JSON.stringify({ bootstrap, group, topic, partitions })], null, 30_000);
      return JSON.parse(stdout.toString().trim().split('\n').at(-1) ?? 'null') as AdminGroupView;
    },
  };
}
