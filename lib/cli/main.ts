#!/usr/bin/env node
/** The `relq` command (docs/cli.md): runs one command, closes its connections, exits with its code. */
import { runCli } from './program.js';

const code = await runCli(process.argv);
// Output written to pipes is flushed before the exit; the connections are closed already, but a
// client that never reached Redis may keep a reconnect timer for a moment: do not wait for it.
process.stdout.write('', () => process.stderr.write('', () => process.exit(code)));
