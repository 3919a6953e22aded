import { Injectable } from '@nestjs/common';
import { InjectNamedQueue, type NamedQueue } from '../../../lib/nest/index.js';
import type { AudioJobs } from './audio.jobs.js';

/** The producer: `@InjectQueue('audio') audioQueue: Queue` and `add(name, data)` in BullMQ. */
@Injectable()
export class AudioService {
  constructor(@InjectNamedQueue('audio') private readonly audioQueue: NamedQueue<AudioJobs>) {}

  async transcode(file: string): Promise<string> {
    const job = await this.audioQueue.add('transcode', { file });
    return job.id;
  }

  async concatenate(files: string[]): Promise<string> {
    const job = await this.audioQueue.add('concatenate', { files });
    return job.id;
  }
}
