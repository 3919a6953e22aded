// Basic auth for the dashboard (docs/dashboard.md, "Who may use it"): a browser asks for the
// user name and password once, then sends them with every request of the page. Serve the
// dashboard over HTTPS (or only on a private network): Basic auth sends the password each time.
import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { DashboardOptions } from 'relq/dashboard';

/** A guard that lets one user read and act, and the challenge that makes a browser ask for them. */
export function basicAuth(user: string, password: string): Required<Pick<DashboardOptions, 'guard' | 'challenge'>> {
  const expected = Buffer.from(`Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`);
  return {
    guard: (req: IncomingMessage) => {
      const given = Buffer.from(req.headers.authorization ?? '');
      return given.length === expected.length && timingSafeEqual(given, expected);
    },
    challenge: 'Basic realm="relq dashboard", charset="UTF-8"',
  };
}
