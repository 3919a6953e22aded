/** A finished run's files: results.json (meta and raw numbers), RESULTS.md and the chart (report.ts). */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { dirname } from 'node:path';
import { RELQ_BATCH_MODE } from './adapters.js';
import { root, type BenchConfig } from './options.js';
import { payloadBytes } from './payload.js';
import { log } from './recorder.js';
import { writeReport } from './report.js';
import type { BenchResults, RunMeta } from './results.js';

export function writeOutputs(cfg: BenchConfig, results: BenchResults, started: Date, redisVersion: string): void {
  const meta: RunMeta = {
    date: started.toISOString(),
    durationSec: (Date.now() - started.getTime()) / 1000,
    command: cfg.command,
    nproc: cpus().length,
    cpuModel: cpus()[0]?.model ?? 'unknown',
    memGiB: totalmem() / 1024 ** 3,
    node: process.version,
    redis: redisVersion,
    libs: libVersions(),
    cfg: { ...cfg, skip: [...cfg.skip], payloadBytes: payloadBytes(), batchMode: RELQ_BATCH_MODE },
  };
  for (const f of [cfg.out, cfg.svg, cfg.json]) mkdirSync(dirname(f), { recursive: true });
  writeFileSync(cfg.json, `${JSON.stringify({ meta, results }, null, 1)}\n`);
  writeReport(meta, results, cfg.out, cfg.svg);
  log(`wrote ${cfg.out}, ${cfg.svg}, ${cfg.json} in ${meta.durationSec.toFixed(0)} s`);
}

/** Versions of the libraries measured; relq's with its commit (RELQ_BENCH_LIB under --ref). */
function libVersions(): Record<string, string> {
  const v = (dir: string) => {
    try {
      return (JSON.parse(readFileSync(`${root}/${dir}/package.json`, 'utf8')) as { version: string }).version;
    } catch {
      return 'unknown';
    }
  };
  let commit = process.env.RELQ_BENCH_LIB ?? '';
  if (!commit) {
    try {
      commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: root, encoding: 'utf8' }).trim();
      if (execFileSync('git', ['status', '--porcelain', 'lib'], { cwd: root, encoding: 'utf8' }).trim()) commit += ' + uncommitted lib/ changes';
    } catch {
      commit = 'no git';
    }
  }
  const refSha = process.env.RELQ_BENCH_REF_SHA;
  return {
    relq: `${v('.')} (${commit})`,
    ...(refSha ? { 'relq@ref': `relq@${refSha} (lib/ as committed)` } : {}),
    bullmq: v('node_modules/bullmq'),
    'bee-queue': v('node_modules/bee-queue'),
    ioredis: v('node_modules/ioredis'),
    groupmq: v('node_modules/groupmq'),
  };
}
