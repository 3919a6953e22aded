#!/usr/bin/env node
/** The `relq` command (docs/cli.md): runs one command, closes its connections, exits with its code. */
import { debugWithoutIoredis } from './debug-env.js';

// Before ioredis is loaded (the `debug` package reads DEBUG once): its output holds passwords.
const { debug, stripped } = debugWithoutIoredis(process.env.DEBUG);
if (debug !== undefined) process.env.DEBUG = debug;
if (stripped) process.stderr.write('relq: DEBUG output of ioredis is turned off: it would print the password and job data\n');
const { runCli } = await import('./program.js');

const code = await runCli(process.argv);
// Output written to pipes is flushed before the exit; the connections are closed already, but a
// client that never reached Redis may keep a reconnect timer for a moment: do not wait for it.
process.stdout.write('', () => process.stderr.write('', () => process.exit(code)));
