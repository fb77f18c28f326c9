/**
 * A reader of the Prometheus text exposition format (version 0.0.4), written from the format's
 * specification rather than with the exporting library, so a scrape is checked as Prometheus
 * itself would read it: `# HELP` / `# TYPE` lines, then `name{label="value",…} value [timestamp]`
 * samples, label values escaped with `\\`, `\"` and `\n`.
 */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Scrape {
  /** Metric family name → its declared type (counter, gauge, histogram, summary, untyped). */
  types: Map<string, string>;
  help: Map<string, string>;
  samples: Sample[];
}

// Values are Go float syntax (strconv.ParseFloat): NaN and Inf in any letter case.
function parseValue(text: string, line: string): number {
  const word = text.toLowerCase();
  if (word === '+inf' || word === 'inf') return Infinity;
  if (word === '-inf') return -Infinity;
  if (word === 'nan') return NaN;
  const value = Number(text);
  if (text === '' || Number.isNaN(value)) throw new Error(`bad sample value in: ${line}`);
  return value;
}

function parseLabels(text: string, line: string): { labels: Record<string, string>; rest: string } {
  const labels: Record<string, string> = {};
  let i = 0;
  for (;;) {
    while (text[i] === ' ' || text[i] === ',') i++;
    if (text[i] === '}') return { labels, rest: text.slice(i + 1) };
    const name = /^[a-zA-Z_][a-zA-Z0-9_]*/.exec(text.slice(i))?.[0];
    if (!name || text[i + name.length] !== '=' || text[i + name.length + 1] !== '"') throw new Error(`bad label in: ${line}`);
    i += name.length + 2;
    let value = '';
    for (;;) {
      const c = text[i++];
      if (c === undefined) throw new Error(`unterminated label value in: ${line}`);
      if (c === '"') break;
      if (c === '\\') {
        const e = text[i++];
        value += e === 'n' ? '\n' : e === '\\' ? '\\' : e === '"' ? '"' : `\\${e}`;
      } else value += c;
    }
    labels[name] = value;
  }
}

export function parsePrometheusText(body: string): Scrape {
  const scrape: Scrape = { types: new Map(), help: new Map(), samples: [] };
  for (const line of body.split('\n')) {
    if (line.trim() === '') continue;
    if (line.startsWith('#')) {
      const m = /^#\s+(HELP|TYPE)\s+([a-zA-Z_:][a-zA-Z0-9_:]*)\s*(.*)$/.exec(line);
      if (m?.[1] === 'TYPE') scrape.types.set(m[2]!, m[3]!);
      else if (m?.[1] === 'HELP') scrape.help.set(m[2]!, m[3]!);
      continue;
    }
    const name = /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(line)?.[0];
    if (!name) throw new Error(`bad sample line: ${line}`);
    let rest = line.slice(name.length);
    let labels: Record<string, string> = {};
    if (rest.startsWith('{')) ({ labels, rest } = parseLabels(rest.slice(1), line));
    const [valueText = '', timestamp] = rest.trim().split(/\s+/);
    if (timestamp !== undefined && !/^-?\d+$/.test(timestamp)) throw new Error(`bad timestamp in: ${line}`);
    scrape.samples.push({ name, labels, value: parseValue(valueText, line) });
  }
  return scrape;
}

/** Sum of the samples named `name` whose labels include every pair in `labels`. */
export function sampleSum(scrape: Scrape, name: string, labels: Record<string, string> = {}): number {
  let sum = 0;
  for (const s of scrape.samples) {
    if (s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v)) sum += s.value;
  }
  return sum;
}

/** The metric family a sample belongs to (histogram and summary samples carry suffixes). */
export function familyOf(scrape: Scrape, sampleName: string): string | undefined {
  if (scrape.types.has(sampleName)) return sampleName;
  const base = sampleName.replace(/_(bucket|sum|count|total|created)$/, '');
  return scrape.types.has(base) ? base : undefined;
}
