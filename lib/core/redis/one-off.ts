import type { ConnectionInput } from './types.js';
import { boundedCall, closeClient, openConnection, type ClientHandle } from './connection.js';
import { afterLoading } from './loading.js';
import { wrapRedisError } from './redis-errors.js';

/**
 * One operation of the API on a connection of its own (listQueues, the function library's
 * status and load): under relq's reply deadline, sent again while a restarted server is still
 * loading, errors typed as `op`'s; a connection it opened is closed again, a client passed in
 * stays open. The caller checks its options before.
 */
export async function withConnection<T>(op: string, connection: ConnectionInput | undefined, work: (handle: ClientHandle) => Promise<T>): Promise<T> {
  const handle = openConnection(connection);
  const send = () => boundedCall(handle, work(handle));
  try {
    try {
      return await send();
    } catch (err) {
      return await afterLoading(handle, err, send);
    }
  } catch (err) {
    throw wrapRedisError(err, op, handle);
  } finally {
    if (handle.owned) await closeClient(handle.client);
  }
}
