/**
 * docs/nest.md's "Migrating from @nestjs/bullmq" answers every BullMQ name a Nest app may use:
 * each one appears in the BullMQ column (the first cell of a table row) of that section, and
 * every row says what to use instead. The names are read from the BullMQ installed for the bench
 * (its .d.ts files, with the TypeScript compiler): the public methods and properties of Queue
 * (with what it inherits from QueueGetters and QueueBase), Job, Worker, FlowProducer and
 * QueueEvents, the keys of JobsOptions, WorkerOptions, QueueOptions and FlowJob, the events of
 * QueueEvents and Worker. So a BullMQ upgrade that adds a name fails here until the docs answer
 * it. @nestjs/bullmq is not installed: its module and decorator names are listed below.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';

const ROOT = join(import.meta.dirname, '..', '..');
const BULLMQ = join(ROOT, 'node_modules', 'bullmq', 'dist', 'esm');

const NEST_BULLMQ = [
  'BullModule.forRoot',
  'BullModule.forRootAsync',
  'BullModule.registerQueue',
  'BullModule.registerQueueAsync',
  'BullModule.registerFlowProducer',
  'BullModule.registerFlowProducerAsync',
  '@Processor',
  '@OnWorkerEvent',
  '@QueueEventsListener',
  '@OnQueueEvent',
  '@InjectQueue',
  '@InjectFlowProducer',
  'WorkerHost',
  'QueueEventsHost',
  'getQueueToken',
  'getFlowProducerToken',
  'BullRegistrar',
  'JOB_REF',
];

/** The exported declaration `name` of one BullMQ .d.ts file. */
function exported(program: ts.Program, checker: ts.TypeChecker, file: string, name: string): ts.Symbol {
  const source = program.getSourceFile(join(BULLMQ, file));
  const module = source && checker.getSymbolAtLocation(source);
  const symbol = module && checker.getExportsOfModule(module).find((s) => s.name === name);
  if (!symbol) throw new Error(`bullmq's ${file} no longer exports ${name}: update this test`);
  return symbol;
}

function bullmqNames(): Record<string, string[]> {
  const classes = ['queue', 'job', 'worker', 'flow-producer', 'queue-events'].map((f) => `classes/${f}.d.ts`);
  const interfaces = ['worker-options', 'queue-options', 'flow-job'].map((f) => `interfaces/${f}.d.ts`);
  const files = [...classes, ...interfaces, 'types/job-options.d.ts'];
  const program = ts.createProgram(
    files.map((f) => join(BULLMQ, f)),
    { noEmit: true, skipLibCheck: true, types: [], module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext },
  );
  const checker = program.getTypeChecker();
  const ownDeclaration = (d: ts.Declaration) => d.getSourceFile().fileName.startsWith(BULLMQ);
  const hidden = (d: ts.Declaration) =>
    (ts.getCombinedModifierFlags(d) & (ts.ModifierFlags.Private | ts.ModifierFlags.Protected)) !== 0 ||
    ts.getJSDocTags(d).some((t) => t.tagName.text === 'internal');
  const isPublic = (p: ts.Symbol) => !p.name.startsWith('_') && !(p.declarations ?? []).some(hidden);

  // Instance and static members declared by BullMQ (not Node's EventEmitter), public only.
  const members = (file: string, name: string): string[] => {
    const symbol = exported(program, checker, file, name);
    const names = [checker.getDeclaredTypeOfSymbol(symbol), checker.getTypeOfSymbol(symbol)]
      .flatMap((type) => checker.getPropertiesOfType(type))
      .filter((p) => {
        const ds = p.declarations ?? [];
        return ds.length > 0 && ds.every(ownDeclaration) && isPublic(p) && p.name !== 'prototype';
      })
      .map((p) => p.name);
    return [...new Set(names)];
  };
  // Keys of an interface or type alias; of each member of a union (FlowJob).
  const keys = (file: string, name: string): string[] => {
    const type = checker.getDeclaredTypeOfSymbol(exported(program, checker, file, name));
    const parts = type.isUnion() ? type.types : [type];
    return [...new Set(parts.flatMap((t) => checker.getPropertiesOfType(t).filter(isPublic).map((p) => p.name)))];
  };

  return {
    Queue: members('classes/queue.d.ts', 'Queue'),
    Job: members('classes/job.d.ts', 'Job'),
    Worker: members('classes/worker.d.ts', 'Worker'),
    FlowProducer: members('classes/flow-producer.d.ts', 'FlowProducer'),
    QueueEvents: members('classes/queue-events.d.ts', 'QueueEvents'),
    JobsOptions: keys('types/job-options.d.ts', 'JobsOptions'),
    WorkerOptions: keys('interfaces/worker-options.d.ts', 'WorkerOptions'),
    QueueOptions: keys('interfaces/queue-options.d.ts', 'QueueOptions'),
    FlowJob: keys('interfaces/flow-job.d.ts', 'FlowJob'),
    QueueEventsListener: keys('classes/queue-events.d.ts', 'QueueEventsListener'),
    WorkerListener: keys('classes/worker.d.ts', 'WorkerListener'),
  };
}

/** The section: from its heading to the next heading of its level. */
function migrationSection(): string {
  const lines = readFileSync(join(ROOT, 'docs', 'nest.md'), 'utf8').split('\n');
  const start = lines.findIndex((l) => l.startsWith('## Migrating from `@nestjs/bullmq`'));
  if (start < 0) throw new Error('docs/nest.md has no "## Migrating from `@nestjs/bullmq`" section');
  const end = lines.findIndex((l, i) => i > start && l.startsWith('## '));
  return lines.slice(start, end < 0 ? undefined : end).join('\n');
}

/** The body rows of the section's tables (not headers or separators), split into cells at unescaped `|`. */
function tableRows(section: string): string[][] {
  const separator = (l: string | undefined) => l !== undefined && /^\|[\s|:-]+\|$/.test(l);
  const lines = section.split('\n');
  return lines
    .filter((l, i) => l.startsWith('|') && !separator(l) && !separator(lines[i + 1]))
    .map((l) => l.split(/(?<!\\)\|/).slice(1, -1).map((c) => c.trim()));
}

const codeSpans = (text: string) => [...text.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);
const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * A BullMQ name is answered when a code span of a row's BullMQ cell holds it as `name`,
 * `name(` (a call), `.name` (a member), `'name'` (an event) or `name:` (an option key).
 */
function named(name: string, spans: string[]): boolean {
  const n = escape(name);
  const forms = [`^${n}$`, `(?:^|[^\\w$'-])${n}\\(`, `\\.${n}(?![\\w$'-])`, `'${n}'`, `(?:^|[^\\w$.'-])${n}\\??:`].map((f) => new RegExp(f));
  return spans.some((s) => forms.some((f) => f.test(s)));
}

/** A Nest name (`BullModule.forRoot`, `@Processor`) anywhere in a span, not as part of a longer name. */
function namedNest(name: string, spans: string[]): boolean {
  const form = new RegExp(`(?:^|[^\\w$.@])${escape(name)}(?![\\w$])`);
  return spans.some((s) => form.test(s));
}

const section = migrationSection();
const rows = tableRows(section);
const bullmqSpans = rows.flatMap((cells) => codeSpans(cells[0] ?? ''));
const names = existsSync(BULLMQ) ? bullmqNames() : undefined;

test('BullMQ is installed and its names are read', () => {
  expect(names).toBeDefined(); // a devDependency (the bench): npm install
  const n = names!;
  expect(n.Queue).toEqual(expect.arrayContaining(['add', 'addBulk', 'getJobs', 'getWaiting', 'getJobCounts', 'obliterate', 'close']));
  expect(n.Job).toEqual(expect.arrayContaining(['updateProgress', 'log', 'moveToDelayed', 'fromId', 'attemptsMade', 'returnvalue']));
  expect(n.Worker).toEqual(expect.arrayContaining(['run', 'close', 'pause', 'concurrency']));
  expect(n.FlowProducer).toEqual(expect.arrayContaining(['add', 'getFlow']));
  expect(n.JobsOptions).toEqual(expect.arrayContaining(['attempts', 'backoff', 'removeOnComplete', 'failParentOnFailure']));
  expect(n.WorkerOptions).toEqual(expect.arrayContaining(['concurrency', 'lockDuration', 'limiter']));
  expect(n.QueueOptions).toEqual(expect.arrayContaining(['connection', 'prefix', 'defaultJobOptions']));
  expect(n.FlowJob).toEqual(expect.arrayContaining(['name', 'queueName', 'children']));
  expect(n.QueueEventsListener).toEqual(expect.arrayContaining(['completed', 'failed', 'retries-exhausted', 'drained']));
  expect(n.WorkerListener).toEqual(expect.arrayContaining(['completed', 'failed', 'stalled', 'drained']));
  const all = Object.values(n).flat();
  expect(all.filter((x) => x.startsWith('_'))).toEqual([]);
  expect(n.Queue.length).toBeGreaterThan(50);
});

test.each(['Queue', 'Job', 'Worker', 'FlowProducer', 'QueueEvents', 'JobsOptions', 'WorkerOptions', 'QueueOptions', 'FlowJob', 'QueueEventsListener', 'WorkerListener'])(
  'every name of BullMQ %s is answered in the migration section',
  (group) => {
    const missing = (names?.[group] ?? []).filter((name) => !named(name, bullmqSpans));
    expect(missing.map((m) => `${group}: ${m}`)).toEqual([]);
  },
);

test('every @nestjs/bullmq module and decorator name is answered in the migration section', () => {
  expect(NEST_BULLMQ.filter((name) => !namedNest(name, bullmqSpans))).toEqual([]);
});

test('every row of the migration tables says what to do in relq', () => {
  expect(rows.length).toBeGreaterThan(30);
  expect(rows.filter((cells) => cells.length < 2 || cells[1] === '').map((cells) => cells.join(' | '))).toEqual([]);
});
