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

/** One line of a sized payload: a larger job's data is a list of records, as an order's lines or a report's rows are. */
interface LineItem {
  sku: string;
  name: string;
  qty: number;
  price: number;
  tags: string[];
}

const itemsBySize = new Map<number, LineItem[]>();

/**
 * A payload of `bytes` bytes of JSON (exactly, for seq 12345; a few bytes more or less for
 * others): the usual fields and as many line items as fit, the note padded to the rest.
 * Payloads of one size share their items (the libraries serialize each job anyway).
 */
export function makeSizedPayload(seq: number, bytes: number): Payload & { items: LineItem[] } {
  let items = itemsBySize.get(bytes);
  let note = NOTE;
  const base = makePayload(seq);
  if (!items) {
    items = [];
    // the JSON with no items, then each item and its comma while they fit
    let size = Buffer.byteLength(JSON.stringify({ ...makePayload(12345), items })) - 1;
    for (let i = 0; ; i++) {
      const item: LineItem = { sku: `SKU-${String(i).padStart(6, '0')}`, name: `Item number ${i}`, qty: 1 + (i % 9), price: 10 + (i % 100) / 4, tags: ['stock', i % 2 ? 'odd' : 'even'] };
      size += Buffer.byteLength(JSON.stringify(item)) + 1;
      if (size > bytes) break;
      items.push(item);
    }
    itemsBySize.set(bytes, items);
  }
  const short = bytes - Buffer.byteLength(JSON.stringify({ ...makePayload(12345), items }));
  note += ' '.repeat(Math.max(0, short));
  return { ...base, note, items };
}
