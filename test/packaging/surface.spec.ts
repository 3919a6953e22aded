/**
 * The package's public surface as `npm pack` ships it: each entry point exports exactly the
 * names it promises (the header of its index.ts, the README's "Engine API"), read from the
 * packed .d.ts files with the TypeScript checker and from the packed JavaScript with Node;
 * Queue has exactly its public members (no Redis keys, no connection); and no file ships that
 * no entry point reaches or that relq/testing does not need (the repository's own tooling stays
 * in tools/). A name or a file more or less fails here: widening the surface is a decision,
 * made by editing these lists.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { walk } from '../../tools/transpile.mjs';
import { packedTarball } from '../support/packed.js';

const root = resolve(import.meta.dirname, '..', '..');

/** Each entry point's exported names, values and types, sorted. */
const PROMISED: Record<string, string[]> = {
  '.': [
    'ActivityEvent', 'AddFlowOptions', 'AddResult', 'AuthenticationError', 'Backoff', 'BackoffStrategies', 'BackoffStrategy', 'BatchHandler', 'BatchOutcome', 'BatchWorker',
    'BatchWorkerOptions', 'BulkJob', 'CancelOptions', 'CancelResult', 'CancelledError', 'ChildFailurePolicy', 'CleanOptions', 'CleanState', 'ClosedError', 'ConnectionError', 'ConnectionInput',
    'ConnectionOptions', 'CronSchedule', 'CrossQueueFlowError', 'CustomBackoff', 'DeadLetter', 'DeadLetterFilter', 'DeduplicationMode',
    'DeduplicationOptions', 'DeduplicationOutcome', 'DependencyPageOptions', 'DurabilityOptions', 'EverySchedule', 'EvictionCheck',
    'ExclusiveOptions', 'FlowChildren', 'FlowDependencies', 'FlowDependency', 'FlowJob', 'FlowJobElsewhere', 'FlowJobExistsError', 'FlowJobHere', 'FlowJobOptions', 'FlowNode',
    'FlowResult', 'FunctionLibraryLoad', 'FunctionLibraryState', 'FunctionLibraryStatus', 'GetFlowOptions', 'GroupOverride', 'Handler', 'HandlerFile', 'Job', 'JobDataOf',
    'JobError', 'JobFailedError', 'JobInfo', 'JobLeasedError',
    'JobMap', 'JobName', 'JobNotRetryableError', 'JobOptions', 'JobOrder', 'JobPage', 'JobParent', 'JobPolicy', 'JobPolicyOptions', 'JobProgress', 'JobResultOf', 'JobSpec',
    'JobState', 'Lease', 'LeaseLostError', 'LeaseOptions', 'LeaseRef', 'LeasedJob', 'MetricsHistory', 'MetricsOptions', 'MetricsPoint', 'MetricsRange', 'MissedPolicy', 'NamedBulkJob', 'NamedJob',
    'NamedJobOptions', 'NamedQueue', 'NotReplicatedError', 'OutcomeEvent', 'PartitionedBulkJob', 'PartitionedJobOptions', 'PartitionedQueue', 'PartitionedQueueOptions', 'PartitionsMismatchError', 'PauseOptions', 'PayloadTooLargeError', 'PermissionError', 'Queue',
    'QueueClosedError', 'QueueCounts', 'QueueDeletedError', 'QueueEvent', 'QueueEventType', 'QueueFullError', 'QueueInUseError',
    'QueueListing', 'QueueOptions', 'QueueProducer', 'QueueState', 'QueueStats', 'RateLimit', 'RateLimitError', 'RelqError', 'RelqWarning',
    'RemoveOptions', 'ResizeRefusedError', 'ResizeResult', 'Retention', 'RoleHolder', 'RunTimeQuantiles', 'SandboxError', 'SandboxOptions', 'SchedulerBounds', 'SchedulerInfo', 'SchedulerJobOptions', 'SchedulerSpec', 'SchedulerTemplate',
    'SchedulerTickResult', 'SchedulerTicker', 'SchedulerTickerOptions', 'ServerConfigError', 'SweepResult', 'TimeoutError',
    'UnreadableValueError', 'UnrecoverableError', 'ValidationError', 'WarningHandler', 'Worker', 'WorkerEvent', 'WorkerInfo', 'WorkerOptions',
    'functionLibraryStatus', 'listQueues', 'loadFunctionLibrary',
  ],
  './nest': [
    'AlreadyRegisteredError', 'BatchOutcome', 'BatchProcessDecorator', 'BatchProcessMethod', 'BatchProcessOptions', 'BatchProcessOptionsArg', 'BatchProcessResult',
    'CancelledError', 'ClosedError', 'ExclusiveOptions', 'FactoryFunction', 'FactoryInject', 'HandlerFile', 'HandlerStatus', 'HealthOptions', 'HealthThresholds',
    'InjectNamedQueue', 'InjectQueue', 'Job', 'JobDataOf', 'JobInfo', 'JobMap', 'JobName', 'JobOptions', 'JobResultOf', 'JobSpec', 'JobState',
    'LeaseLostError', 'LeasedJob', 'NamedBulkJob', 'NamedJob', 'NamedJobOptions', 'NamedProcessDecorator', 'NamedProcessMethod', 'NamedQueue',
    'OnQueueEvent', 'OnWorkerEvent', 'PartitionedQueue', 'Process', 'ProcessDecorator', 'ProcessMethod', 'ProcessOptions', 'Processor', 'ProcessorDefaults',
    'ProcessorEventType', 'ProcessorOptions', 'ProcessorStatus', 'Queue', 'QueueBoundUsage', 'QueueClosedError', 'QueueCounts', 'QueueDefaults',
    'QueueDeletedError', 'QueueEvent', 'QueueEventsListener', 'QueueFullError', 'QueueHealth', 'QueueHealthDetails', 'QueueHealthIndicator',
    'QueueHealthIndicatorResult', 'QueueHealthService', 'QueueInUseError', 'QueueListenerEventType', 'QueueListenerEvents', 'QueueModule',
    'QueueModuleAsyncOptions', 'QueueModuleOptions', 'QueueModuleOptionsFactory', 'QueueOptionsFactory', 'QueueProducer', 'QueueRegistry',
    'QueueSchedulerOptions', 'QueueState', 'QueueStats', 'RELQ_MODULE_OPTIONS', 'RedisHealth', 'RegisterQueueAsyncOptions',
    'RegisterQueueOptions', 'RelqConfigError', 'RelqHealthReport', 'SandboxError', 'SandboxOptions', 'Scheduled', 'SchedulerDeclaration', 'ShutdownOptions', 'SweeperOptions',
    'SweeperStatus', 'TypedProcessorDecorators', 'UnrecoverableError', 'WorkerHost', 'WorkersOptions', 'getNamedQueueToken',
    'getQueueOptionsToken', 'getQueueToken', 'processorFor',
  ],
  './metrics': ['DEFAULT_PROCESSING_BUCKETS', 'DEFAULT_WAIT_BUCKETS', 'RelqMetrics', 'RelqMetricsOptions'],
  './tracing': ['RelqTracing', 'RelqTracingOptions'],
  './testing': [
    'DrainedJob', 'FakeHandler', 'FakeJob', 'FakeQueue', 'FakeQueueOptions', 'QueueProducer', 'RedisServerNotFoundError', 'TestJob',
    'TestJobOverrides', 'TestRedis', 'TestRedisOptions', 'createFakeQueue', 'createTestJob', 'provideFakeQueue', 'startTestRedis',
  ],
  './dashboard': [
    'ACTION_HEADER', 'CountsSample', 'DashboardAccess', 'DashboardGuard', 'DashboardHandler', 'DashboardOptions', 'JobList', 'JobSummary',
    'QueueOverview', 'Throughput', 'ThroughputPoint', 'createDashboard',
  ],
  './dashboard/nest': ['RelqDashboardModule', 'RelqDashboardModuleAsyncOptions', 'RelqDashboardModuleOptions'],
  './dashboard/bull-board': ['RelqBullBoardAdapter'],
};

/** Queue's public members. */
const QUEUE_MEMBERS = [
  'ack', 'ackBatch', 'add', 'addBulk', 'addChildren', 'addFlow', 'cancel', 'changeDelay', 'changePriority', 'childrenResults', 'clean', 'clearLogs', 'close',
  'closeQueue', 'counts', 'defaults', 'deleteQueue', 'drain', 'events',
  'eventsReady', 'getCountsPerPriority', 'getDeduplicationJobId', 'getDependencies',
  'getFlow', 'getGlobalConcurrency', 'getGroupOverrides', 'getJob', 'getJobs', 'getMetrics', 'getSchedulers', 'getWorkers', 'identity', 'isClosed', 'isPaused', 'isQueueClosed', 'lease', 'listDead', 'log',
  'maxPayloadBytes', 'moveToDelayed', 'nack', 'name', 'pause', 'prefix', 'promote', 'purgeDead', 'queueState', 'rateLimit', 'reject', 'remove',
  'removeDeduplicationKey', 'removeScheduler', 'reopenQueue', 'requeue', 'resume', 'retry', 'retryDead', 'runSchedulers', 'setGlobalConcurrency', 'setGroupOverride', 'snooze', 'stats', 'sweep',
  'touch', 'tryAdd', 'tryAddBulk', 'updateData', 'updateProgress', 'upsertScheduler', 'waitForChildren', 'waitForResult', 'watch',
];

/** The modules of dist/lib/testing/: the kit, and the private server startTestRedis() starts. */
const TESTING_MODULES = ['fake-queue', 'fake-queue-provider', 'index', 'redis-binary', 'redis-ping', 'redis-process', 'test-job', 'test-redis', 'watchdog'];

interface PackageJson {
  exports: Record<string, string | { types: string; default: string }>;
  bin: Record<string, string>;
}

let work: string | undefined;
/** The unpacked package (inside the repository, so that Node finds the dependencies its entry points import). */
let pkg: string;
let manifest: PackageJson;
/** Entry point → its .d.ts and .js, absolute. */
let entries: Array<{ entry: string; types: string; js: string }>;

beforeAll(() => {
  mkdirSync(join(root, '.tmp'), { recursive: true });
  work = mkdtempSync(join(root, '.tmp', 'surface-'));
  const untar = spawnSync('tar', ['-xzf', packedTarball()], { cwd: work, encoding: 'utf8' });
  if (untar.status !== 0) throw new Error(`tar: ${untar.stderr}`);
  pkg = join(work, 'package');
  manifest = JSON.parse(readFileSync(join(pkg, 'package.json'), 'utf8')) as PackageJson;
  entries = Object.entries(manifest.exports).flatMap(([entry, target]) =>
    typeof target === 'object' ? [{ entry, types: join(pkg, target.types), js: join(pkg, target.default) }] : [],
  );
}, 300_000);

afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

test('the entry points are the promised ones', () => {
  expect(entries.map((e) => e.entry).sort()).toEqual(Object.keys(PROMISED).sort());
});

test("each entry point's declarations export exactly the promised names", () => {
  const program = ts.createProgram(
    entries.map((e) => e.types),
    { noEmit: true, skipLibCheck: true, types: [], module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext },
  );
  const checker = program.getTypeChecker();
  const exported = (file: string) => checker.getExportsOfModule(checker.getSymbolAtLocation(program.getSourceFile(file)!)!);
  for (const { entry, types } of entries) {
    expect({ entry, names: exported(types).map((s) => s.name).sort() }).toEqual({ entry, names: PROMISED[entry] });
  }
  const queue = exported(entries.find((e) => e.entry === '.')!.types).find((s) => s.name === 'Queue')!;
  const members = checker.getPropertiesOfType(checker.getDeclaredTypeOfSymbol(checker.getAliasedSymbol(queue)));
  expect(members.map((m) => m.name).sort()).toEqual(QUEUE_MEMBERS);
});

test("each entry point's JavaScript exports only declared names", () => {
  const script = `for (const f of JSON.parse(process.argv[1])) console.log(JSON.stringify(Object.keys(await import(f)).sort()));`;
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', script, JSON.stringify(entries.map((e) => e.js))], { cwd: pkg, encoding: 'utf8', timeout: 60_000 });
  expect(run.stderr).toBe('');
  const values = run.stdout.trim().split('\n').map((line) => JSON.parse(line) as string[]);
  entries.forEach(({ entry }, i) => {
    expect({ entry, undeclared: values[i]!.filter((name) => !PROMISED[entry]!.includes(name)) }).toEqual({ entry, undeclared: [] });
  });
});

test('every module shipped is reached from an entry point or the bin', () => {
  const lib = join(pkg, 'dist', 'lib');
  /** Modules (paths without .js / .d.ts) that an entry point's code or declarations import. */
  const reached = new Set<string>();
  const visit = (module: string): void => {
    if (reached.has(module)) return;
    reached.add(module);
    for (const file of [`${module}.js`, `${module}.d.ts`].filter((f) => existsSync(f))) {
      // `from './x.js'`, and literal `import('./x.js')` (code, and type references of declarations)
      for (const m of readFileSync(file, 'utf8').matchAll(/(?:from |import\()'(\.{1,2}\/[^']+)\.js'/g)) visit(resolve(dirname(file), m[1]!));
    }
  };
  const moduleOf = (file: string) => file.replace(/\.js$/, '');
  for (const { js } of entries) visit(moduleOf(js));
  for (const bin of Object.values(manifest.bin)) visit(moduleOf(join(pkg, bin)));
  const shipped = walk(lib).filter((f) => f.endsWith('.js') && !f.includes(join('dashboard', 'public')));
  expect(shipped.filter((f) => !reached.has(moduleOf(f))).map((f) => relative(lib, f))).toEqual([]);
  expect([...reached].filter((m) => !existsSync(`${m}.js`)).map((m) => relative(lib, m))).toEqual([]);
});

test("relq/testing ships its kit and startTestRedis()'s server, not the repository's launcher", () => {
  const files = readdirSync(join(pkg, 'dist', 'lib', 'testing')).sort();
  expect(files).toEqual(TESTING_MODULES.flatMap((m) => [`${m}.d.ts`, `${m}.js`]).sort());
});
