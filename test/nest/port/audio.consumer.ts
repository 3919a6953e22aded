import { OnWorkerEvent, Processor, WorkerHost, type Job, type NamedJob } from '../../../lib/nest/index.js';
import type { AudioJobs } from './audio.jobs.js';
import { AudioLog } from './audio-log.js';

/** The consumer, as in the NestJS docs: a WorkerHost whose process(job) switches on job.name. */
@Processor('audio')
export class AudioConsumer extends WorkerHost<NamedJob<AudioJobs>> {
  constructor(private readonly audioLog: AudioLog) {
    super();
  }

  async process(job: NamedJob<AudioJobs>): Promise<AudioJobs[keyof AudioJobs]['result']> {
    switch (job.name) {
      case 'transcode': {
        let progress = 0;
        for (let i = 0; i < 4; i++) {
          progress += 25;
          await job.updateProgress(progress);
        }
        return { file: `${job.data.file}.mp3`, steps: progress / 25 };
      }
      case 'concatenate':
        return { file: job.data.files.join('+') };
    }
  }

  @OnWorkerEvent('active')
  onActive(job: Job<unknown>): void {
    this.audioLog.log(`worker: processing job ${job.id} of type ${job.name} with data ${JSON.stringify(job.data)}`);
  }

  @OnWorkerEvent('progress')
  onProgress(job: Job<unknown>, progress: unknown): void {
    this.audioLog.log(`worker: job ${job.id} at ${JSON.stringify(progress)}`);
  }
}
