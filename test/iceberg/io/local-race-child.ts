/**
 * Child process for the cross-process race in local.test.ts. It opens its own LocalFileIO on the root given
 * as argv[2], then for every message { round, location, mode, etag? } makes one conditional write and reports
 * { round, ok } or { round, code }.
 */
import { FileIOError } from '../../../iceberg/io/file-io.js';
import { LocalFileIO } from '../../../iceberg/io/local.js';

interface Order {
  readonly round: number;
  readonly location: string;
  readonly mode: 'absent' | 'match';
  readonly etag?: string;
}

const root = process.argv[2];
const id = process.argv[3] ?? '?';
if (root === undefined || process.send === undefined) {
  throw new Error('usage: fork(local-race-child, [root, id]) with an IPC channel');
}
const io = new LocalFileIO({ root });
const send = process.send.bind(process);

process.on('message', (msg: Order | 'exit') => {
  if (msg === 'exit') {
    process.disconnect();
    return;
  }
  const data = Buffer.from(`child ${id} round ${msg.round} pid ${process.pid}`);
  const write = msg.mode === 'absent' ? io.putIfAbsent(msg.location, data) : io.putIfMatch(msg.location, data, msg.etag ?? '');
  write.then(
    (info) => send({ round: msg.round, id, ok: true, etag: info.etag }),
    (err: unknown) => send({ round: msg.round, id, ok: false, code: err instanceof FileIOError ? err.code : String(err) }),
  );
});
send({ ready: true, id });
