#!/usr/bin/env node
// The one copy step for what tsc does not emit: the engine reads its Lua next to its compiled code
// (lib/core/redis/script-code.ts loads each feature folder's .lua) and the dashboard serves its page and
// browser script from next to its code, so every build output copies lib/**/*.{lua,html,css,js}
// to the same relative path: `npm run build` (dist/, by running
// this file), `npm run bench` (.bench-tmp/), `npm run sample` (.tmp/sample/) and
// transpileTree() in transpile.mjs (the fault tests' and `npm run chaos`'s .tmp/ builds).
import { copyFileSync, mkdirSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Files tsc does not emit (lib/ holds no hand-written .js except the dashboard's browser script). */
const ASSET = /\.(lua|html|css|js)$/;

/**
 * Copies every `<fromRoot>/lib/**\/*.{lua,html,css,js}` to the same path under `toRoot`
 * (e.g. lib/core/leases/lease.lua -> <toRoot>/lib/core/leases/lease.lua). Returns how many.
 */
export function copyLua(fromRoot, toRoot) {
  let count = 0;
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.isFile() && ASSET.test(entry.name)) {
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
  console.log(`copy-lua: copied ${count} asset file(s) (.lua, .html, .css, .js) from lib/ to dist/lib/`);
}
