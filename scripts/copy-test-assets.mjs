#!/usr/bin/env node
// tsc compiles only TypeScript, but tests also read fixtures (JSON, binary captures) that sit beside them.
// Copy every non-TypeScript file under test/ to the same place under dist/test/, so compiled tests find
// their fixtures at the same relative path as the sources do.
import { cpSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';

function copy(dir) {
  for (const name of readdirSync(dir)) {
    const src = join(dir, name);
    if (statSync(src).isDirectory()) copy(src);
    else if (!name.endsWith('.ts')) {
      const dst = join('dist', src);
      mkdirSync(dirname(dst), { recursive: true });
      cpSync(src, dst);
    }
  }
}
copy('test');
