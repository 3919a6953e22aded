import type { QueueOptions } from './types.js';
import type { Blocker } from '../redis/blocking-wait.js';
import { EventHub, jobEvents } from '../events/event-hub.js';
import { cancelNotices, watchCancels, type CancelNotice } from '../worker/cancel-notices.js';
import { Flows } from '../flows/flows.js';
import { Inspector } from '../management/inspector.js';
import type { QueueInternals } from './internals.js';
import { Leasing } from '../leases/leasing.js';
import { Management } from '../management/management.js';
import { resolveQueueOptions, type ResolvedQueueOptions } from './options.js';
import { Producer } from '../adds/producer.js';
import { ProgressWriter } from '../progress/progress.js';
import { QueueContext } from './queue-context.js';
import { partitionOption } from '../partitions/partition-option.js';
import { QueueProbe } from '../adds/queue-probe.js';
import { QueueSettings } from '../settings/queue-settings.js';
import { Schedulers } from '../schedulers/schedulers.js';
import { Settling } from '../settles/settling.js';
import { Watching } from '../events/watching.js';

/**
 * @internal The parts one Queue object is made of, each the owner of its part of the work
 * (one file of this folder each); the Queue classes only pass calls on to them.
 */
export interface QueueParts<Data, Result> {
  readonly o: ResolvedQueueOptions;
  readonly ctx: QueueContext;
  /** Bounded / fair / lifecycle / exclusive / stats (queue-settings.ts). */
  readonly settings: QueueSettings;
  readonly hub: EventHub;
  /** The cancel notices its workers listen to (lib/core/worker/cancel-notices.ts). */
  readonly cancels: EventHub<CancelNotice>;
  readonly producer: Producer<Data>;
  readonly leasing: Leasing<Data>;
  readonly settling: Settling<Result>;
  readonly inspector: Inspector<Data, Result>;
  readonly management: Management<Data, Result>;
  readonly watching: Watching<Data, Result>;
  readonly progress: ProgressWriter;
  readonly flows: Flows;
  readonly schedulers: Schedulers;
}

/** @internal Checks every option first (nothing connects before), then builds the parts. */
export function buildQueueParts<Data, Result>(name: string, options: QueueOptions): QueueParts<Data, Result> {
  const o = resolveQueueOptions(name, options);
  const ctx = new QueueContext(name, o, options.connection, partitionOption(options));
  const settings = new QueueSettings(ctx, o.settings);
  const wrapError = (err: unknown) => ctx.wrapError(err, 'events');
  const warn = (message: string) => ctx.warn({ code: 'RELQ_EVENTS_RETRY', queue: name, message });
  const hub = new EventHub(ctx.handle, jobEvents(ctx.keys.byName.events, ctx.keys.byName.listeners, name), name, wrapError, warn);
  const probe = new QueueProbe(ctx.handle.client, ctx.keys.byName.listeners, ctx.keys.byName.meta, () => hub.listening);
  const inspector = new Inspector<Data, Result>(ctx);
  return {
    o,
    ctx,
    settings,
    hub,
    cancels: new EventHub(ctx.handle, cancelNotices(() => [ctx.keys.derived.cancels]), name, wrapError, warn),
    producer: new Producer<Data>(ctx, settings, probe),
    leasing: new Leasing<Data>(ctx, settings),
    settling: new Settling<Result>(ctx),
    inspector,
    management: new Management<Data, Result>(ctx, inspector),
    watching: new Watching<Data, Result>(name, hub, (id) => inspector.getJob(id)),
    progress: new ProgressWriter(ctx),
    flows: new Flows(ctx, settings),
    schedulers: new Schedulers(ctx),
  };
}

/** @internal What workers and the Nest runtime use beyond the public API (internals.ts). */
export function queueInternals<Data, Result>(name: string, p: QueueParts<Data, Result>): QueueInternals<unknown> {
  const { ctx, leasing, settling, progress, flows, inspector, hub, cancels, management } = p;
  return {
    name,
    maxPayloadBytes: p.o.maxPayloadBytes,
    warn: ctx.warn,
    get isClosed() {
      return ctx.isClosed;
    },
    leaseStep: (items, count, leaseMs, woken, reqId, worker) => leasing.leaseStep(items, count, leaseMs, woken, reqId, worker),
    settle: (items, reqId) => settling.settle(items, reqId),
    touchMany: (leases, extendMs, worker) => settling.touchMany(leases, extendMs, worker),
    waitForWork: (blocker, ms) => leasing.waitForWork(blocker as Blocker, ms), // its own, from openBlocker()
    updateProgress: (lease, value) => progress.updateProgress(lease, value),
    log: (lease, line) => progress.log(lease, line),
    updateData: (lease, data) => management.updateData(lease, data as Data),
    addChildren: (lease, children, opts) => flows.addChildren(lease, children, opts),
    childrenResults: (id) => flows.childrenResults(id),
    sweepReporting: (opts) => inspector.sweepReporting(opts),
    watchCancels: (notice, active) => watchCancels(cancels, notice, active),
    countsAndAge: () => inspector.countsAndAge(),
    openBlocker: () => ctx.openBlocker(),
    closeBlocker: (b) => ctx.closeBlocker(b as Blocker),
  };
}
