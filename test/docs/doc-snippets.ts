/**
 * The TypeScript snippets of the docs, and their compilation with the TypeScript compiler API
 * against the library's sources (tsconfig.json's options and `relq/*` paths).
 *
 * A ```ts block is compiled as a module of its own. The HTML comment on the line before it may
 * say otherwise:
 *   <!-- file: <path> -->                         the block is that file (checked equal to it elsewhere; tsc compiles it)
 *   <!-- ts-check: fragment: <why> -->            not compiled (a piece of code shown alone)
 *   <!-- ts-check: continues: <why> -->           compiled after the block before it in the same document
 *   <!-- ts-check: external <module>...: <why> --> the names imported from these modules (packages relq does
 *                                                 not depend on, files of the reader's app) are of type any
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';

export interface Snippet {
  /** Where it is: `docs/x.md:<line of the fence>`. */
  readonly where: string;
  readonly doc: string;
  /** 1-based line of the first line of code. */
  readonly line: number;
  readonly code: string;
  readonly marking: Marking | undefined;
}

export type Marking =
  | { kind: 'file'; path: string }
  | { kind: 'fragment'; why: string }
  | { kind: 'continues'; why: string }
  | { kind: 'external'; modules: string[]; why: string };

const FENCE = /^( *)```ts\n/;
/** What a module resolves to when its types are installed (a package without them resolves to its .js). */
const TYPED: readonly string[] = [ts.Extension.Ts, ts.Extension.Tsx, ts.Extension.Dts, ts.Extension.Mts, ts.Extension.Dmts, ts.Extension.Cts, ts.Extension.Dcts];

/** Every ```ts block of `docs` (paths relative to `root`), in order, with the marking before it. */
export function extractSnippets(root: string, docs: readonly string[]): Snippet[] {
  return docs.flatMap((doc) => {
    const lines = readFileSync(join(root, doc), 'utf8').split('\n');
    const out: Snippet[] = [];
    for (let i = 0; i < lines.length; i++) {
      const open = FENCE.exec(`${lines[i]}\n`);
      if (!open) continue;
      const indent = open[1]!;
      const end = lines.findIndex((l, j) => j > i && l === `${indent}\`\`\``);
      if (end < 0) throw new Error(`${doc}:${i + 1}: a \`\`\`ts block that is not closed`);
      const code = lines
        .slice(i + 1, end)
        .map((l) => l.slice(indent.length))
        .join('\n');
      out.push({ where: `${doc}:${i + 1}`, doc, line: i + 2, code, marking: markingOf(`${doc}:${i + 1}`, lines[i - 1]?.trim()) });
      i = end;
    }
    return out;
  });
}

function markingOf(where: string, before: string | undefined): Marking | undefined {
  const comment = before && /^<!-- (.*) -->$/.exec(before)?.[1];
  if (!comment) return undefined;
  const file = /^file: (\S+)$/.exec(comment);
  if (file) return { kind: 'file', path: file[1]! };
  const m = /^ts-check: (fragment|continues|external((?: \S+)+)): (\S.*)$/.exec(comment);
  if (!m) {
    if (comment.startsWith('ts-check')) throw new Error(`${where}: a ts-check marking reads 'ts-check: <fragment|continues|external <module>...>: <why>', not '${comment}'`);
    return undefined;
  }
  const why = m[3]!;
  if (m[1] === 'fragment' || m[1] === 'continues') return { kind: m[1], why };
  return { kind: 'external', modules: m[2]!.trim().split(' '), why };
}

/** The problems tsc finds in each compiled snippet (none: []), by `where`; and the snippets it compiled. */
export function compileSnippets(root: string, snippets: readonly Snippet[]): Map<string, string[]> {
  const config = ts.getParsedCommandLineOfConfigFile(join(root, 'tsconfig.json'), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: (d) => { throw new Error(flat(d)); } })!;
  // No test globals (jest's types) in what a reader's app compiles.
  const options: ts.CompilerOptions = { ...config.options, noEmit: true, types: ['node'] };
  const files = new Map<string, { snippet: Snippet; text: string; offset: number }>();
  const externals = new Map<string, string>(); // virtual module path -> its text
  const externalOf = new Map<string, Map<string, string>>(); // snippet file -> module name -> virtual path

  snippets.forEach((s, i) => {
    if (s.marking?.kind === 'file' || s.marking?.kind === 'fragment') return;
    const before = s.marking?.kind === 'continues' ? snippets[i - 1] : undefined;
    if (s.marking?.kind === 'continues' && (!before || before.doc !== s.doc || before.marking?.kind === 'fragment')) {
      throw new Error(`${s.where}: 'continues' needs a compiled block before it in the same document`);
    }
    const prefix = before ? `${before.code}\n` : '';
    const file = join(root, '.snippets', `${s.where.replace(/[/:.]/g, '_')}.ts`);
    const text = `${prefix}${s.code}\nexport {};\n`;
    files.set(file, { snippet: s, text, offset: s.line - 1 - prefix.split('\n').length + 1 });
    if (s.marking?.kind === 'external') {
      const byName = new Map<string, string>();
      s.marking.modules.forEach((name, n) => {
        const path = join(root, '.snippets', `${s.where.replace(/[/:.]/g, '_')}.external${n}.ts`);
        externals.set(path, externalModule(file, text, name));
        byName.set(name, path);
      });
      externalOf.set(file, byName);
    }
  });

  const host = ts.createCompilerHost(options, true);
  const readFile = host.readFile.bind(host);
  const fileExists = host.fileExists.bind(host);
  host.readFile = (f) => files.get(f)?.text ?? externals.get(f) ?? readFile(f);
  host.fileExists = (f) => files.has(f) || externals.has(f) || fileExists(f);
  const cache = ts.createModuleResolutionCache(root, (f) => f, options);
  host.resolveModuleNameLiterals = (literals, containing, redirected, opts, containingFile) =>
    literals.map((literal) => {
      const external = externalOf.get(containing)?.get(literal.text);
      if (external) return { resolvedModule: { resolvedFileName: external, extension: ts.Extension.Ts, isExternalLibraryImport: false } };
      const mode = ts.getModeForUsageLocation(containingFile, literal, opts);
      return ts.resolveModuleName(literal.text, containing, opts, host, cache, redirected, mode);
    });

  const program = ts.createProgram({ rootNames: [...files.keys()], options, host });
  const problems = new Map<string, string[]>();
  for (const [file, { snippet, offset }] of files) {
    const sf = program.getSourceFile(file)!;
    const diagnostics = [...program.getSyntacticDiagnostics(sf), ...program.getSemanticDiagnostics(sf)];
    problems.set(
      snippet.where,
      diagnostics.map((d) => `${snippet.doc}:${sf.getLineAndCharacterOfPosition(d.start ?? 0).line + 1 + offset}: TS${d.code} ${flat(d)}`),
    );
    for (const name of snippet.marking?.kind === 'external' ? snippet.marking.modules : []) {
      const found = name.startsWith('.') ? undefined : ts.resolveModuleName(name, file, options, ts.sys).resolvedModule;
      if (found && TYPED.includes(found.extension)) {
        problems.get(snippet.where)!.push(`${snippet.where}: '${name}' is installed with its types: it needs no 'external' marking`);
      }
    }
  }
  return problems;
}

/** A module whose every name that `text` imports from `name` is of type any (as a value and as a type). */
function externalModule(file: string, text: string, name: string): string {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, false, ts.ScriptKind.TS);
  const out: string[] = ['export {};'];
  for (const st of sf.statements) {
    if (!ts.isImportDeclaration(st) || !ts.isStringLiteral(st.moduleSpecifier) || st.moduleSpecifier.text !== name) continue;
    const clause = st.importClause;
    if (clause?.name) out.push('declare const _default: any;', 'export default _default;');
    const bindings = clause?.namedBindings;
    for (const el of bindings && ts.isNamedImports(bindings) ? bindings.elements : []) {
      const exported = (el.propertyName ?? el.name).text;
      out.push(`export declare const ${exported}: any;`, `export type ${exported} = any;`);
    }
  }
  return out.join('\n');
}

function flat(d: ts.Diagnostic): string {
  return ts.flattenDiagnosticMessageText(d.messageText, '\n');
}
