import { createServer } from 'node:net';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { AppModule } from './app.module.js';

const HOST = '127.0.0.1';

/** Resolves false when something already listens on `port` (the usual first-run problem). */
function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', (err: NodeJS.ErrnoException) => (err.code === 'EADDRINUSE' ? resolve(false) : reject(err)));
    probe.listen(port, HOST, () => probe.close(() => resolve(true)));
  });
}

async function bootstrap(): Promise<void> {
  const port = Number(process.env.PORT ?? 3000);
  if (!(await portIsFree(port))) {
    // Checked before Nest starts, so the user reads one line, not Nest's error and a stack trace.
    Logger.error(`port ${port} is already in use: stop what listens there, or choose another with PORT=<port> npm run sample`, 'Sample');
    process.exitCode = 1;
    return;
  }
  const app = await NestFactory.create(AppModule);
  app.enableShutdownHooks(); // SIGINT/SIGTERM: drain running emails, then close
  await app.listen(port, HOST);
  Logger.log(`sample listening on http://${HOST}:${port} (POST /emails, GET /emails/:id, GET /health, the dashboard at /dashboard)`, 'Sample');
  process.send?.('listening'); // to `npm run sample` (tools/run-sample.mjs), when it started this process
}

void bootstrap();
