import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { AppModule } from './app.module.js';

async function bootstrap(): Promise<void> {
  const app = await NestFactory.create(AppModule);
  app.enableShutdownHooks(); // SIGINT/SIGTERM: drain running emails, then close
  const port = Number(process.env.PORT ?? 3000);
  await app.listen(port, '127.0.0.1');
  Logger.log(`sample listening on http://127.0.0.1:${port} (POST /emails, GET /emails/:id, GET /health)`, 'Sample');
}

void bootstrap();
