import { OnQueueEvent, QueueEventsListener } from '../../../lib/nest/index.js';
import { AudioLog } from './audio-log.js';

/** Queue events of every process: `extends QueueEventsHost` in @nestjs/bullmq, a plain class here. */
@QueueEventsListener('audio')
export class AudioEventsListener {
  constructor(private readonly audioLog: AudioLog) {}

  @OnQueueEvent('active')
  onActive(job: { jobId: string }): void {
    this.audioLog.log(`queue: processing job ${job.jobId}`);
  }

  @OnQueueEvent('completed')
  onCompleted({ jobId, returnvalue }: { jobId: string; returnvalue: unknown }): void {
    this.audioLog.log(`queue: job ${jobId} completed with ${JSON.stringify(returnvalue)}`);
  }
}
