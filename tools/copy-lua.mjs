#!/usr/bin/env node
// Copies every lib/**/*.lua to the same relative path under dist/ (tsc does not copy
// non-TS assets). Run after `tsc -p tsconfig.build.json` (see `npm run build`).
import { copyFile, mkdir, readdir } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const srcDir = join(root, 'lib');
const outDir = join(root, 'dist');

async function* walk(dir) {
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch (err) {
    if (err && err.code === 'ENOENT') return;
    throw err;
  }
  for (const entry of entries) {
    const full = join(dir, entry.name);
    if (entry.isDirectory()) yield* walk(full);
    else if (entry.isFile() && entry.name.endsWith('.lua')) yield full;
  }
}

let count = 0;
for await (const file of walk(srcDir)) {
  const rel = relative(root, file); // e.g. lib/lua/claim.lua
  const dest = join(outDir, rel); // e.g. dist/lib/lua/claim.lua
  await mkdir(dirname(dest), { recursive: true });
  await copyFile(file, dest);
  count++;
}
console.log(`copy-lua: copied ${count} .lua file(s) from lib/ to dist/lib/`);
