// The instrumentation hook (lib/core/instrumentation/instruments.ts); no entry point exports it.
export { instruments, registerInstrument } from './instruments.js';
export type { AddInfo, AddScope, Instrument, JobOutcome, OutcomeKind, ProcessScope } from './instruments.js';
export { jobOutcome, observeAdd, observedAdd, observeProcess, observeSweep } from './observe.js';
export { rememberTraceContext, stampAll, traceContextOf, withTraceContext } from './trace-context.js';
