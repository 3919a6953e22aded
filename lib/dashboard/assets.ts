import { readFileSync } from 'node:fs';

/** The page's files (lib/dashboard/public), read once: plain HTML, CSS and one script, no build step. */
const FILES: Record<string, { type: string; file: string }> = {
  '/': { type: 'text/html; charset=utf-8', file: 'index.html' },
  '/app.js': { type: 'text/javascript; charset=utf-8', file: 'app.js' },
  '/style.css': { type: 'text/css; charset=utf-8', file: 'style.css' },
};

/** @internal */
export interface Asset {
  type: string;
  body: Buffer;
}

let loaded: Map<string, Asset> | undefined;

/** The asset served at `path` (relative to the dashboard's base path), if any. @internal */
export function asset(path: string): Asset | undefined {
  loaded ??= new Map(
    Object.entries(FILES).map(([at, { type, file }]) => [at, { type, body: readFileSync(new URL(`./public/${file}`, import.meta.url)) }]),
  );
  return loaded.get(path);
}
