/** The scenarios of `npm run bench`, in the order they run (see Scenario.when). */
import { add } from './add.js';
import { backlog } from './backlog.js';
import { fleetLimits } from './fleet-limits.js';
import { floor } from './floor.js';
import { grouped } from './grouped.js';
import { idle } from './idle.js';
import type { Scenario } from './kit.js';
import { latency } from './latency.js';
import { latencyLoad } from './latency-load.js';
import { memory } from './memory.js';
import { metricsHistory } from './metrics-history.js';
import { monitor } from './monitor.js';
import { observability } from './observability.js';
import { payloadSizes } from './payloads.js';
import { processing } from './process.js';
import { processes } from './processes.js';
import { rateLimited } from './rate-limited.js';
import { schedulers } from './schedulers.js';

export const SCENARIOS: readonly Scenario[] = [floor, add, processing, latency, latencyLoad, processes, memory, payloadSizes, idle, monitor, backlog, grouped, schedulers, rateLimited, fleetLimits, observability, metricsHistory];
