#!/usr/bin/env node
// The one Lua copy step. The engine reads its Lua next to its compiled code
// (lib/core/redis/scripts.ts loads ../../scripts/*.lua), and tsc copies no non-TS files, so every build
// output copies lib/**/*.lua to the same relative path: `npm run build` (dist/, by running
// this file), `npm run bench` (.bench-tmp/), `npm run sample` (.tmp/sample/) and
// transpileTree() in transpile.mjs (the fault tests' and `npm run chaos`'s .tmp/ builds).
import { copyFileSync, mkdirSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Copies every `<fromRoot>/lib/**\/*.lua` to the same path under `toRoot`
 * (e.g. lib/scripts/lease.lua -> <toRoot>/lib/scripts/lease.lua). Returns how many.
 */
export function copyLua(fromRoot, toRoot) {
  let count = 0;
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.isFile() && entry.name.endsWith('.lua')) {
        const dest = join(toRoot, relative(fromRoot, full));
        mkdirSync(dirname(dest), { recursive: true });
        copyFileSync(full, dest);
        count++;
      }
    }
  };
  walk(join(fromRoot, 'lib'));
  return count;
}

// `node tools/copy-lua.mjs`: after `tsc -p tsconfig.build.json` (see `npm run build`).
if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
  const count = copyLua(root, join(root, 'dist'));
  console.log(`copy-lua: copied ${count} .lua file(s) from lib/ to dist/lib/`);
}
