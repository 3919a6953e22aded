// Transpiles TypeScript files of the repository into a directory outside the source tree,
// file by file (ts.transpileModule: no type check, well under a second), keeping their paths,
// and copies the engine's Lua next to its code (copy-lua.mjs). Child processes of the fault
// tests and `npm run chaos` run the result with plain Node (Node 20 cannot load TypeScript;
// dist/ may be stale). The output stays inside the repository (under .tmp/), where Node still finds
// node_modules.
import { mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import ts from 'typescript';
import { copyLua } from './copy-lua.mjs';

/** Every file under `dir` (absolute paths). */
export function walk(dir) {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    return statSync(p).isDirectory() ? walk(p) : [p];
  });
}

/**
 * Transpiles `files` (absolute paths of .ts files under `root`) into `outRoot`, each at its path
 * relative to `root`, as ES modules with decorator metadata (for Nest classes); copies
 * the Lua of lib/ when `lua` is true.
 */
export function transpileTree(root, files, outRoot, { lua = true } = {}) {
  for (const file of files) {
    const { outputText } = ts.transpileModule(readFileSync(file, 'utf8'), {
      compilerOptions: {
        module: ts.ModuleKind.ESNext,
        target: ts.ScriptTarget.ES2022,
        experimentalDecorators: true,
        emitDecoratorMetadata: true,
        verbatimModuleSyntax: false,
      },
      fileName: file,
    });
    const dest = join(outRoot, relative(root, file)).replace(/\.ts$/, '.js');
    mkdirSync(dirname(dest), { recursive: true });
    writeFileSync(dest, outputText);
  }
  if (lua) copyLua(root, outRoot);
}

/** The library's TypeScript sources (no declaration files). */
export function libSources(root) {
  return walk(join(root, 'lib')).filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'));
}
