/**
 * Headless Chromium for the dashboard's browser tests, with a fresh profile in its own temp
 * directory; `close()` stops the browser and removes the directory.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';

const CHROMIUM = '/usr/bin/chromium';

export interface Browser {
  readonly context: BrowserContext;
  /** A directory of its own for screenshots, removed with the profile. */
  readonly dir: string;
  close(): Promise<void>;
}

export interface BrowserOptions {
  /** More Chromium switches, e.g. `--host-resolver-rules=...`. */
  args?: string[];
  viewport?: { width: number; height: number };
  httpCredentials?: { username: string; password: string };
}

export async function launchBrowser(options: BrowserOptions = {}): Promise<Browser> {
  const dir = mkdtempSync(join(tmpdir(), 'relq-dashboard-browser-'));
  try {
    const context = await chromium.launchPersistentContext(join(dir, 'profile'), {
      executablePath: CHROMIUM,
      headless: true,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', ...(options.args ?? [])],
      viewport: options.viewport ?? { width: 1440, height: 760 },
      ...(options.httpCredentials ? { httpCredentials: options.httpCredentials } : {}),
    });
    return {
      context,
      dir,
      async close() {
        await context.close().catch(() => undefined);
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}
