/**
 * The two Python clients as group drivers: each member and each admin call is a `/usr/bin/python3` process
 * running one of the scripts beside this file (confluent_group.py, kafka_python_group.py).
 */
import { fileURLToPath } from 'node:url';
import { ChildRunner } from '../clients/process.js';
import { MemberProcess } from './member-process.js';
import type { AdminGroupView, GroupClientDriver } from './scenario.js';

const PYTHON = '/usr/bin/python3';

export function pythonGroupDriver(name: 'confluent-kafka-python' | 'kafka-python', runner: ChildRunner): GroupClientDriver {
  const script = fileURLToPath(new URL(name === 'confluent-kafka-python' ? './confluent_group.py' : './kafka_python_group.py', import.meta.url));
  return {
    name,
    startMember: (o) => new MemberProcess(o.name, PYTHON, [script, 'member', JSON.stringify(o)]),
    admin: async (bootstrap, group, topic, partitions) => {
      const { stdout } = await runner.run(PYTHON, [script, 'admin', JSON.stringify({ bootstrap, group, topic, partitions })], null, 30_000);
      return JSON.parse(stdout.toString().trim().split('\n').at(-1) ?? 'null') as AdminGroupView;
    },
  };
}
