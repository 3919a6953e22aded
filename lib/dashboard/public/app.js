// The dashboard page: polls the JSON API next to it and draws with DOM calls only.
// Job data is user input, so text goes in through textContent, never as HTML.
'use strict';

const STATES = ['pending', 'working', 'delayed', 'completed', 'dead', 'waiting-children'];
const TOTAL_FIELD = { pending: 'pending', working: 'working', delayed: 'delayed', completed: 'completed', dead: 'dead', 'waiting-children': 'waitingChildren' };
// Finished jobs read newest first; waiting ones in the order they will run.
const DEFAULT_ORDER = { pending: 'asc', working: 'asc', delayed: 'asc', completed: 'desc', dead: 'desc', 'waiting-children': 'asc' };
const PAGE = 20;

// refreshError: the status shows a failed refresh, which the next good one clears (an action's message stays)
const view = { queue: null, state: 'pending', start: 0, overview: [], loaded: false, refreshError: false, refreshMs: 2000, timer: 0 };
const $ = (id) => document.getElementById(id);

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === 'class') node.className = v;
    else if (k.startsWith('data-')) node.setAttribute(k, v);
    else node[k] = v;
  }
  for (const c of children) if (c !== null && c !== undefined) node.append(c instanceof Node ? c : String(c));
  return node;
}

async function api(path, body) {
  const init = body === undefined ? {} : { method: 'POST', headers: { 'content-type': 'application/json', 'x-relq-dashboard': '1' }, body: JSON.stringify(body) };
  const res = await fetch(`api/${path}`, { credentials: 'same-origin', ...init });
  const json = await res.json().catch(() => ({ error: `HTTP ${res.status}` }));
  if (!res.ok) throw new Error(json.error || `HTTP ${res.status}`);
  return json;
}

const q = (name) => `queues/${encodeURIComponent(name)}`;
const time = (ms) => (ms ? new Date(ms).toLocaleString() : '');
// Times of today as a clock, older ones with their date: table cells stay narrow.
const when = (ms) => (!ms ? '' : new Date(ms).toDateString() === new Date().toDateString() ? clock(ms) : new Date(ms).toLocaleString([], { dateStyle: 'short', timeStyle: 'short' }));
const clock = (ms) => new Date(ms).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', second: '2-digit', hour12: false });

function status(text, isError) {
  const s = $('status');
  s.textContent = text;
  s.className = isError ? 'status error' : 'status';
  view.refreshError = false;
}

/** One row across a table saying what it waits for or why it is empty. */
function note(table, text) {
  table.tBodies[0].replaceChildren(el('tr', {}, el('td', { class: 'empty', colSpan: table.tHead.rows[0].cells.length }, text)));
}

/** Until the next page of jobs arrives, the table says so instead of showing the last one. */
function loadingJobs() {
  note($('jobs'), 'Loading jobs…');
  $('page-info').textContent = '';
}

// ---- overview -------------------------------------------------------------

function renderQueues() {
  const rows = view.overview.map((o) => {
    const c = o.counts || {};
    const tr = el('tr', { class: o.name === view.queue ? 'selected' : '', 'data-queue': o.name },
      el('td', { class: 'qname' }, o.name, o.partitions ? el('span', { class: 'badge badge-partitions', title: partitionTitle(o.partitions) }, `${o.partitions.length} partitions`) : null, c.paused ? el('span', { class: 'badge badge-paused' }, 'paused') : null, o.error ? el('span', { class: 'badge badge-dead', title: o.error }, 'error') : null),
      el('td', { class: 'num' }, c.pending ?? '–'),
      el('td', { class: 'num' }, c.working ?? '–'),
      el('td', { class: 'num' }, c.delayed ?? '–'),
      el('td', { class: 'num' }, c.completed ?? '–'),
      el('td', { class: c.dead ? 'num dead' : 'num' }, c.dead ?? '–'));
    tr.addEventListener('click', () => selectQueue(o.name));
    return tr;
  });
  $('queue-table').tBodies[0].replaceChildren(...rows);
}

/** A partitioned queue's breakdown, one line per partition. */
function partitionTitle(parts) {
  return parts.map((p, i) => `partition ${i}: ${p.pending} pending, ${p.working} working, ${p.delayed} delayed, ${p.dead} dead`).join('\n');
}

function selectQueue(name) {
  view.queue = name;
  view.start = 0;
  renderQueues();
  loadingJobs();
  note($('workers'), 'Loading workers…');
  refresh();
}

// ---- one queue ------------------------------------------------------------

function renderQueueHead(o) {
  $('queue').hidden = false;
  $('queue-name').textContent = o.name;
  const paused = !!(o.counts && o.counts.paused);
  $('queue-paused').hidden = !paused;
  $('pause').hidden = paused;
  $('resume').hidden = !paused;
  const tabs = STATES.map((s) => {
    const n = o.counts ? o.counts[TOTAL_FIELD[s]] : undefined;
    const b = el('button', { type: 'button', class: `tab state-${s}${s === view.state ? ' active' : ''}`, 'data-state': s }, s, el('span', { class: 'count' }, n ?? ''));
    b.setAttribute('role', 'tab');
    b.addEventListener('click', () => { view.state = s; view.start = 0; loadingJobs(); refresh(); });
    return b;
  });
  $('tabs').replaceChildren(...tabs);
}

/** The actions a job in its state offers; each one engine call through the API. */
function jobButtons(queue, job) {
  const buttons = [];
  if (job.state === 'dead' || job.state === 'completed') buttons.push(actionButton('Retry', 'retry', queue, job));
  if (job.state === 'delayed') buttons.push(actionButton('Promote', 'promote', queue, job));
  if (job.state !== 'dead' && job.state !== 'completed') buttons.push(actionButton('Cancel', 'cancel', queue, job, 'danger'));
  buttons.push(actionButton('Remove', 'remove', queue, job, 'danger'));
  return buttons;
}

/** What a Cancel does to a job in its state, asked before it is done. */
function cancelQuestion(job) {
  return job.state === 'working'
    ? `Cancel the running job ${job.id}? Its handler is aborted and the job is dead-lettered.`
    : `Cancel job ${job.id}? It is removed from the queue.`;
}

function actionButton(label, action, queue, job, cls) {
  const b = el('button', { type: 'button', class: cls || '', 'data-action': action }, label);
  b.addEventListener('click', async (ev) => {
    ev.stopPropagation();
    if (action === 'remove' && !confirm(`Remove job ${job.id}?`)) return;
    if (action === 'cancel' && !confirm(cancelQuestion(job))) return;
    if (action === 'retry' && job.state === 'completed' && !confirm(`Run the completed job ${job.id} again? Its result goes.`)) return;
    const body = action === 'remove' && job.state === 'working' ? { force: true } : {};
    const done = action === 'cancel' ? (a) => (a.cancelled ? `Cancel: ${job.id} ${a.cancelled}` : `Cancel: ${job.id} had already finished (or is gone)`) : `${label}: ${job.id}`;
    await act(`${q(queue)}/jobs/${encodeURIComponent(job.id)}/${action}`, body, done);
    if ($('detail').hidden || $('detail').dataset.jobId !== job.id) return;
    if (action === 'remove' || (action === 'cancel' && job.state !== 'working')) $('detail').hidden = true;
    else await showJob(queue, job.id);
  });
  return b;
}

/** Failed attempts of the budget it has now; those before a retry (or redrive) apart. */
function triesCell(j) {
  const before = j.failuresBeforeRedrive || 0;
  const title = before ? `failed attempts / attempts since the last retry; ${before} failed before it` : 'failed attempts / attempts';
  return el('td', { class: 'num tries', title }, `${j.failures - before}/${j.maxAttempts}`, before ? el('span', { class: 'muted' }, ` +${before}`) : null);
}

/** `counted`: the state's count from the overview of the same refresh (undefined if unread). */
function renderJobs(list, counted) {
  const rows = list.jobs.map((j) => {
    const tr = el('tr', { 'data-job-id': j.id },
      el('td', { class: 'mono id' }, j.id),
      el('td', { class: j.name ? '' : 'muted' }, j.name || '—'),
      el('td', {}, el('span', { class: `badge state-${j.state}` }, j.state)),
      el('td', { class: 'mono data', title: j.dataPreview }, j.dataPreview),
      triesCell(j),
      el('td', { class: 'when', title: time(j.createdAt) }, when(j.createdAt)),
      el('td', { class: 'when', title: time(j.at) }, when(j.at)),
      el('td', { class: 'error', title: j.lastError || '' }, j.lastError || ''),
      el('td', { class: 'row-actions' }, ...jobButtons(view.queue, j)));
    tr.addEventListener('click', () => showJob(view.queue, j.id));
    return tr;
  });
  if (rows.length === 0) note($('jobs'), `No ${list.state} jobs`);
  else $('jobs').tBodies[0].replaceChildren(...rows);
  // counts and page are two reads: a job added between them still counts
  const last = list.start + list.jobs.length;
  const total = Math.max(counted ?? 0, last);
  $('page-info').textContent = total ? `${list.start + 1}–${last} of ${total}` : '';
  $('prev').disabled = list.start === 0;
  $('next').disabled = list.start + PAGE >= total;
}

/** The queue's live workers (GET .../workers), oldest first. */
function renderWorkers(workers) {
  const rows = workers.map((w) => el('tr', { 'data-worker-id': w.id },
    el('td', { class: 'mono' }, w.host),
    el('td', { class: 'num' }, w.pid),
    el('td', { class: w.appName ? '' : 'muted' }, w.appName || '—'),
    el('td', { class: 'num' }, w.concurrency),
    el('td', { class: 'num' }, w.running),
    el('td', { class: 'when', title: time(w.startedAt) }, when(w.startedAt)),
    el('td', { class: 'when', title: time(w.lastSeenAt) }, when(w.lastSeenAt))));
  if (rows.length === 0) note($('workers'), 'No live worker');
  else $('workers').tBodies[0].replaceChildren(...rows);
}

// ---- charts (inline SVG) ----------------------------------------------------

const SVG = 'http://www.w3.org/2000/svg';
function svg(tag, attrs) {
  const n = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) n.setAttribute(k, String(v));
  return n;
}

/** Lines of `series` ({ key, values }) over `times`, scaled to their common maximum. */
function drawChart(target, times, series) {
  // drawn at the element's own size, so lines and labels are not stretched
  const W = Math.max(200, Math.round(target.clientWidth || 600)), H = 150, L = 34, B = 18, T = 8;
  target.setAttribute('viewBox', `0 0 ${W} ${H}`);
  // an even maximum keeps the middle grid line on a whole number
  const max = 2 * Math.ceil(Math.max(2, ...series.flatMap((s) => s.values)) / 2);
  const x = (i) => L + (times.length < 2 ? 0 : (i * (W - L - 4)) / (times.length - 1));
  const y = (v) => T + (H - T - B) * (1 - v / max);
  const nodes = [];
  for (const f of [0, 0.5, 1]) {
    nodes.push(svg('line', { x1: L, x2: W - 4, y1: y(max * f), y2: y(max * f), class: 'grid' }));
    const label = svg('text', { x: L - 4, y: y(max * f) + 3, class: 'axis', 'text-anchor': 'end' });
    label.textContent = String(Math.round(max * f));
    nodes.push(label);
  }
  // the first time and the last; one sample has one time, not two labels on top of each other
  const ends = times.length === 1 ? [[0, 'start']] : times.length > 1 ? [[0, 'start'], [times.length - 1, 'end']] : [];
  for (const [i, anchor] of ends) {
    const t = svg('text', { x: x(i), y: H - 4, class: 'axis', 'text-anchor': anchor });
    t.textContent = clock(times[i]);
    nodes.push(t);
  }
  for (const s of series) {
    if (s.values.length === 1) {
      nodes.push(svg('circle', { cx: x(0), cy: y(s.values[0]).toFixed(1), r: 2, class: `dot l-${s.key}` })); // a line needs two
    } else if (s.values.length > 1) {
      const pts = s.values.map((v, i) => `${x(i).toFixed(1)},${y(v).toFixed(1)}`).join(' ');
      nodes.push(svg('polyline', { points: pts, class: `line l-${s.key}` }));
    }
  }
  target.replaceChildren(...nodes);
}

function renderThroughput(tp) {
  $('interval').textContent = tp.intervalMs % 1000 === 0 ? `${tp.intervalMs / 1000} s` : `${tp.intervalMs} ms`;
  const times = tp.points.map((p) => p.t);
  drawChart($('throughput-chart'), times, ['completed', 'failed', 'dead'].map((key) => ({ key, values: tp.points.map((p) => p[key]) })));
  drawChart($('backlog-chart'), tp.samples.map((s) => s.t), ['pending', 'working', 'delayed'].map((key) => ({ key, values: tp.samples.map((s) => s[key]) })));
  const history = tp.source === 'history';
  // run times (ms) come with the queue's metrics history; an empty minute draws as 0
  $('runtime-figure').hidden = !history;
  if (history) drawChart($('runtime-chart'), times, ['p50', 'p95', 'p99'].map((key) => ({ key, values: tp.points.map((p) => (p.runTime && p.runTime[key]) || 0) })));
  $('since').textContent = history
    ? `Jobs finished and run times come from the queue's metrics history in Redis (since ${time(tp.since)}), the same for every dashboard and across restarts; the backlog is sampled by this dashboard's server.`
    : `Charts cover what this dashboard's server saw since it started (${time(tp.since)}). A queue with the metrics option keeps its history in Redis instead, across restarts.`;
}

// ---- job detail -------------------------------------------------------------

function block(title, value) {
  return el('section', { class: 'block' }, el('h3', {}, title), el('pre', { class: 'mono' }, typeof value === 'string' ? value : JSON.stringify(value, null, 2)));
}

/** Looks the id up in the selected queue first, then in the others. */
async function findJob(id) {
  const names = [view.queue, ...view.overview.map((o) => o.name).filter((n) => n !== view.queue)];
  for (const name of names) {
    const job = await api(`${q(name)}/jobs/${encodeURIComponent(id)}`).catch(() => null);
    if (job) return renderJob(name, job);
  }
  status(`No job '${id}' in any queue`, true);
}

async function showJob(queue, id) {
  try {
    renderJob(queue, await api(`${q(queue)}/jobs/${encodeURIComponent(id)}`));
  } catch (err) {
    status(err.message, true);
  }
}

/**
 * Where a job is in its attempt budget. A retry (or a redrive of its dead letter) gave it a
 * fresh one: its attempts count from there, the failures before it said apart.
 */
function attemptsText(job) {
  const before = job.failuresBeforeRedrive || 0;
  const used = job.failures - before;
  const of = `of ${job.maxAttempts}`;
  let text = `attempt ${used + 1} ${of} next`;
  if (job.state === 'working') text = `attempt ${used + 1} ${of} running`;
  else if (job.state === 'completed') text = `completed at attempt ${used + 1} ${of}`;
  else if (job.state === 'dead') text = `${used} failed ${of}`;
  return before ? `${text} (${before} failed before the last retry)` : text;
}

function renderJob(queue, job) {
  $('detail').hidden = false;
  $('detail').dataset.jobId = job.id;
  $('detail-title').textContent = `${queue} / ${job.id}`;
  $('detail-actions').replaceChildren(...jobButtons(queue, job));
  const before = job.failuresBeforeRedrive || 0;
  const fields = [
    ['State', el('span', { class: `badge state-${job.state}` }, job.state)], ['Name', job.name || '(default)'],
    ['Attempts', attemptsText(job)], ['Retried', job.retries ? `${job.retries} time${job.retries === 1 ? '' : 's'}` : undefined],
    ['Leased', `${job.dequeues} times`], ['Requeued', job.requeues],
    ['Priority', job.priority], ['Group', job.group], ['Deduplication id', job.deduplicationId],
    ['Parent', job.parent ? `${job.parent.queue} / ${job.parent.id}` : undefined],
    ['Created', time(job.createdAt)], ['Runs at', time(job.runAt)], ['Processed', time(job.processedOn)],
    ['Lease deadline', time(job.leaseDeadline)], ['Completed', time(job.completedAt)], ['Kept until', time(job.retainedUntil)], ['Died', time(job.diedAt)],
  ].filter(([, v]) => v !== undefined && v !== '');
  $('detail-fields').replaceChildren(...fields.flatMap(([k, v]) => [el('dt', {}, k), el('dd', {}, v)]));
  const blocks = [block('Data', job.data)];
  if (job.errors && job.errors.length) {
    // Every failure kept with the job (the last 10), oldest first.
    const title = before ? 'Errors (attempts count from each retry)' : 'Errors';
    blocks.push(block(title, job.errors.map((e) => `attempt ${e.attempt} · ${time(e.at)}\n${e.error}`).join('\n\n')));
  } else if (job.lastError !== undefined) blocks.push(block('Last error', job.lastError));
  if (job.result !== undefined) blocks.push(block('Result', job.result));
  if (job.progress !== undefined) blocks.push(block('Progress', job.progress));
  if (job.logs && job.logs.length) blocks.push(block('Logs', job.logs.join('\n')));
  if (job.children) blocks.push(block('Children', job.children));
  $('detail-blocks').replaceChildren(...blocks);
}

// ---- actions and refresh ------------------------------------------------------

/** Runs an action; `done` is the status it leaves, or makes it from the answer. */
async function act(path, body, done) {
  try {
    const answer = await api(path, body);
    status(typeof done === 'function' ? done(answer) : done);
  } catch (err) {
    status(err.message, true);
  }
  await refresh();
}

async function refresh() {
  clearTimeout(view.timer);
  try {
    const { queues, refreshMs } = await api('queues');
    view.overview = queues;
    view.loaded = true;
    view.refreshMs = refreshMs;
    if (!view.queue && queues.length) view.queue = queues[0].name;
    renderQueues();
    const o = queues.find((x) => x.name === view.queue);
    if (o) {
      renderQueueHead(o);
      const order = DEFAULT_ORDER[view.state];
      const [list, tp, limits, workers] = await Promise.all([
        api(`${q(o.name)}/jobs?state=${view.state}&start=${view.start}&end=${view.start + PAGE - 1}&order=${order}`),
        api(`${q(o.name)}/throughput`),
        api(`${q(o.name)}/settings`),
        api(`${q(o.name)}/workers`),
      ]);
      renderJobs(list, o.counts ? o.counts[TOTAL_FIELD[view.state]] : undefined);
      renderThroughput(tp);
      renderLimits(limits);
      renderWorkers(workers);
    }
    if (view.refreshError) status('');
  } catch (err) {
    status(err.message, true);
    view.refreshError = true;
    if (!view.loaded) note($('queue-table'), `Could not load the queues: ${err.message}`);
  }
  view.timer = setTimeout(refresh, view.refreshMs);
}

/** The limits the fleet shares: queue-wide, per group, and the groups with their own. */
function renderLimits(l) {
  view.limits = l;
  const own = Object.entries(l.groupOverrides).map(([g, o]) => `${g}: ${o.concurrency ?? '-'}`);
  $('queue-limits').textContent =
    `concurrency ${l.globalConcurrency || 'unlimited'}` +
    (l.groupConcurrency ? ` · per group ${l.groupConcurrency}` : '') +
    (own.length ? ` · own limits ${own.join(', ')}` : '');
}

$('set-concurrency').addEventListener('click', () => {
  const now = view.limits ? view.limits.globalConcurrency : 0;
  const text = prompt(`Most jobs of ${view.queue} leased at once by all workers together (0: no limit):`, String(now));
  if (text === null) return;
  if (!/^\d+$/.test(text.trim())) return status('The limit must be a whole number', true);
  void act(`${q(view.queue)}/concurrency`, { limit: Number(text.trim()) }, `concurrency of ${view.queue}: ${Number(text.trim()) || 'unlimited'}`);
});

function queueAction(id, action, body, confirmText) {
  $(id).addEventListener('click', () => {
    if (confirmText && !confirm(confirmText(view.queue))) return;
    void act(`${q(view.queue)}/${action}`, body, `${action}: ${view.queue}`);
  });
}

queueAction('pause', 'pause', {});
queueAction('resume', 'resume', {});
queueAction('redrive', 'redrive', { limit: 1000 }, (n) => `Move up to 1000 dead letters of ${n} back to pending?`);
queueAction('clean-completed', 'clean', { state: 'completed' }, (n) => `Remove the completed jobs of ${n}?`);
queueAction('clean-dead', 'clean', { state: 'dead' }, (n) => `Delete the dead letters of ${n} for good?`);
$('prev').addEventListener('click', () => { view.start = Math.max(0, view.start - PAGE); loadingJobs(); refresh(); });
$('next').addEventListener('click', () => { view.start += PAGE; loadingJobs(); refresh(); });
$('detail-close').addEventListener('click', () => { $('detail').hidden = true; });
// The drawer opens below the header, whose height follows the status line's text.
new ResizeObserver(() => document.documentElement.style.setProperty('--top-height', `${$('top').offsetHeight}px`)).observe($('top'));
$('lookup').addEventListener('submit', (ev) => {
  ev.preventDefault();
  const id = $('lookup-id').value.trim();
  if (id) void findJob(id);
});
refresh();
