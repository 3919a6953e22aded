/**
 * Reading Prometheus text exposition in tests: each sample as `name{label="v",...}` (labels
 * sorted) → value, and the TYPE of each metric family.
 */
export interface Exposition {
  value(name: string, labels?: Record<string, string>): number | undefined;
  type(name: string): string | undefined;
  names(): string[];
}

export function parseExposition(text: string): Exposition {
  const samples = new Map<string, number>();
  const types = new Map<string, string>();
  for (const line of text.split('\n')) {
    const type = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (type) types.set(type[1]!, type[2]!);
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]!] = l[2]!;
    samples.set(key(m[1]!, labels), Number(m[3]));
  }
  return {
    value: (name, labels = {}) => samples.get(key(name, labels)),
    type: (name) => types.get(name),
    names: () => [...types.keys()],
  };
}

function key(name: string, labels: Record<string, string>): string {
  const parts = Object.keys(labels)
    .sort()
    .map((k) => `${k}="${labels[k]}"`);
  return `${name}{${parts.join(',')}}`;
}
