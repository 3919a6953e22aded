import { Module } from '@nestjs/common';
import { QueueModule } from '../../../lib/nest/index.js';
import { AudioConsumer } from './audio.consumer.js';
import { AudioEventsListener } from './audio-events.listener.js';
import { AudioLog } from './audio-log.js';
import { AudioService } from './audio.service.js';

/** `BullModule.registerQueue({ name: 'audio' })` becomes `QueueModule.registerQueue({ name: 'audio' })`. */
@Module({
  imports: [QueueModule.registerQueue({ name: 'audio', defaults: { job: { keepCompletedMs: 60_000 } } })],
  providers: [AudioService, AudioConsumer, AudioEventsListener, AudioLog],
  exports: [AudioService, AudioLog],
})
export class AudioModule {}
