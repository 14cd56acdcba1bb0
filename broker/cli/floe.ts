#!/usr/bin/env node
/**
 * The `floe` command (the package's bin). `floe`, `floe start` or `floe --some.setting=...` start a broker
 * exactly as `node dist/broker/main.js` does (every flag works the same); `floe <command>` runs an admin
 * command against a running broker's admin port (commands.ts); `floe --help` lists them. The admin
 * commands only talk HTTP: nothing of the broker is loaded for them.
 */
import { COMMANDS, overview, runCommand } from './commands.js';

const argv = process.argv.slice(2);
const first = argv[0];

if (first === undefined || first === 'start' || (first.startsWith('-') && first !== '--help' && first !== '-h')) {
  // The broker reads process.argv itself: drop the word `start` and hand over.
  if (first === 'start') process.argv.splice(2, 1);
  await import('../main.js');
} else if (first === '--help' || first === '-h' || first === 'help') {
  process.stdout.write(overview());
} else {
  if (COMMANDS.some((c) => c.words[0] === first)) {
    process.exitCode = await runCommand(argv, { stdout: (s) => process.stdout.write(s), stderr: (s) => process.stderr.write(s), tty: process.stderr.isTTY === true, env: process.env });
  } else {
    process.stderr.write(`floe: unknown command '${first}'\n${overview()}`);
    process.exitCode = 2;
  }
}
