import { queueScript, type EventsFlag, type ScriptArg } from '../redis/script-def.js';
import { POLICY_DEFAULTS_ARG, pushSettleBatch, settledOf, type SettleBatch } from './settle-items.js';

/** Settles leases without leasing more (settle.lua): one boolean per item, in the order of the items. */
export const settleScript = queueScript({
  name: 'settle',
  file: 'settles/settle.lua',
  ops: ['settle'],
  extraKeys: 1,
  extraKeysOf: (keys, a) => [keys.request(a.reqId)],
  encode: (a: { events: EventsFlag; reqId: string; items: SettleBatch }) => {
    const argv: ScriptArg[] = [a.events, POLICY_DEFAULTS_ARG];
    pushSettleBatch(argv, a.items);
    return argv;
  },
  decode: (reply, a) => settledOf(a.items, reply as number[]),
});

export const SETTLE_SCRIPTS = [settleScript] as const;
