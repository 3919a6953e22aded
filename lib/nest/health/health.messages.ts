// The problems the terminus health indicator reports (queue-health.service.ts), worded in
// one place as the rest of relq/nest's messages are (relq.messages.ts).

/** The target of a queue's own connection in the health report. */
export function ownConnection(queueName: string): string {
  return `queue '${queueName}' connection`;
}

export function redisUnreachable(target: string, error: string | undefined): string {
  return `redis ${target} unreachable: ${error}`;
}

export function readFailed(what: 'counts' | 'state' | 'stats' | 'workers', error: string): string {
  return `${what} unavailable: ${error}`;
}

export function backlogOverLimit(pending: number, maxPending: number): string {
  return `backlog ${pending} pending > maxPending ${maxPending}`;
}

export function deadOverLimit(dead: number, maxDead: number): string {
  return `${dead} dead letters > maxDead ${maxDead}`;
}

export function loopStalled(processor: string, forMs: number): string {
  return `lease loop ${processor} stalled: no progress for ${forMs} ms`;
}

export function loopErroring(processor: string, error: string | null): string {
  return `lease loop ${processor} failing: ${error}`;
}

export function sweeperStale(forMs: number, lastError: string | null): string {
  return `sweeper has not completed a run for ${forMs} ms` + (lastError ? ` (last error: ${lastError})` : '');
}

export function queueProblem(queueName: string, problem: string): string {
  return `queue '${queueName}': ${problem}`;
}

export function schedulersOverdue(n: number): string {
  return `${n} scheduler(s) overdue: a next slot passed over 5 s ago and no tick moved it on`;
}

export function noLiveWorker(pending: number): string {
  return `${pending} job(s) pending and no live worker (requireWorkers)`;
}
