/** The job payload every library gets: ~250 bytes of JSON, same shape for all. */
export interface Payload {
  seq: number;
  /** When the producer called add (latency runs: performance.now(); latency-load, whose producer is a child process: clockMs()); 0 otherwise. */
  ts: number;
  user: string;
  email: string;
  action: string;
  tags: string[];
  attrs: { width: number; height: number; format: string; quality: number };
  note: string;
}

const NOTE = 'Resize the upload and store thumbnails.';

export function makePayload(seq: number, ts = 0): Payload {
  return {
    seq,
    ts,
    user: `user-${String(seq % 100000).padStart(6, '0')}`,
    email: `someone.${seq % 1000}@example.com`,
    action: 'image.resize',
    tags: ['thumbnail', 'upload', 'normal'],
    attrs: { width: 1920, height: 1080, format: 'webp', quality: 82 },
    note: NOTE,
  };
}

export function payloadBytes(): number {
  return Buffer.byteLength(JSON.stringify(makePayload(12345, 0)));
}
