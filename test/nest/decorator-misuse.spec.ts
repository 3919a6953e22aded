/**
 * A decorator put where it does not belong is a wiring mistake of the app, reported as the
 * typed RelqConfigError when the class is declared, as other wiring mistakes are.
 */
import { OnQueueEvent, OnWorkerEvent, Process, RelqConfigError, Scheduled } from '../../lib/nest/index.js';

const target = { constructor: class Reports {} };
const notAMethod: PropertyDescriptor = { value: 42 };

test.each([
  ['@Process()', () => Process()(target, 'field', notAMethod), /@Process\(\) must decorate a method; Reports.field is not one/],
  ['@OnWorkerEvent()', () => OnWorkerEvent('completed')(target, 'field', notAMethod), /@OnWorkerEvent\(\) must decorate a method/],
  ['@OnQueueEvent()', () => OnQueueEvent('completed')(target, 'field', notAMethod), /@OnQueueEvent\(\) must decorate a method/],
  ['@Scheduled()', () => Scheduled('nightly', { everyMs: 60_000 })(target, 'field', notAMethod), /@Scheduled\(\) must decorate a method/],
])('%s on something other than a method: RelqConfigError', (_name, decorate, message) => {
  expect(decorate).toThrow(RelqConfigError);
  expect(decorate).toThrow(message);
});

test('two @Process() on one method: RelqConfigError naming it', () => {
  const method: PropertyDescriptor = { value: () => 'done' };
  Process('a')(target, 'run', method);
  const again = () => Process('b')(target, 'run', method);
  expect(again).toThrow(RelqConfigError);
  expect(again).toThrow(/Reports.run has more than one @Process\(\)/);
});
