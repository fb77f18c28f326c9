import assert from 'node:assert/strict';
import fs from 'node:fs';
import { test } from 'node:test';
import { buildTestApp } from '../helper.js';
import { familyOf, parsePrometheusText } from './prometheus-text.js';

const TOKEN = 'dashboard-token-0123456789';

interface Panel {
  title: string;
  targets?: { expr: string }[];
}

test('every metric the example Grafana dashboard queries is exported by GET /metrics, with the labels it groups by', async () => {
  const dashboard = JSON.parse(fs.readFileSync(new URL('../../docs/grafana-dashboard.json', import.meta.url), 'utf8')) as { panels: Panel[] };
  const exprs = dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => ({ panel: p.title, expr: t.expr })));
  assert.ok(exprs.length >= 15, 'the dashboard has its queries');

  const t = await buildTestApp({ env: { METRICS_TOKEN: TOKEN } });
  try {
    // One request first, so the request histogram has samples whose labels can be checked.
    await t.app.inject({ url: '/healthz' });
    const res = await t.app.inject({ url: '/metrics', headers: { authorization: `Bearer ${TOKEN}` } });
    assert.equal(res.statusCode, 200);
    const scrape = parsePrometheusText(res.body);
    const sampleNames = new Set(scrape.samples.map((s) => s.name));

    for (const { panel, expr } of exprs) {
      const names = expr.match(/\b(?:openalerts|process|nodejs)_[a-z0-9_]+/g) ?? [];
      assert.ok(names.length > 0, `${panel}: ${expr} names a metric`);
      for (const name of names) {
        const family = familyOf(scrape, name);
        assert.ok(sampleNames.has(name) || family, `${panel}: ${name} is not in the scrape`);
        // Labels the query groups or filters by must be labels the metric has (checked where it has samples).
        const samples = scrape.samples.filter((s) => s.name === name);
        if (samples.length === 0) continue;
        const grouped = [...expr.matchAll(/by \(([^)]*)\)/g)].flatMap((m) => m[1]!.split(',').map((l) => l.trim()));
        const filtered = [...expr.matchAll(new RegExp(`${name}\\{([^}]*)\\}`, 'g'))].flatMap((m) => [...m[1]!.matchAll(/([a-z_]+)\s*=~?/g)].map((l) => l[1]!));
        for (const label of [...grouped, ...filtered]) {
          if (label === 'instance' || label === 'job' || label === '') continue; // added by Prometheus at scrape time
          if (label === 'le' && !name.endsWith('_bucket')) continue; // the bucket bound, on _bucket samples only
          assert.ok(samples.some((s) => label in s.labels), `${panel}: ${name} has no label ${label}`);
        }
      }
    }
  } finally {
    await t.close();
  }
});
