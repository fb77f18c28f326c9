import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { merchandiseWorld, type MerchandiseWorld, type Params } from './fixture.js';

// The Merchandise API validates with the schemas /openapi.json shows. These tests read the
// published document and hold the running validator to it, rule by rule: a field the document
// requires is required, a documented limit is the limit, a documented list is the list.

type Schema = { type?: string | string[]; required?: string[]; properties?: Record<string, Schema>; maxLength?: number; minimum?: number; maximum?: number; enum?: unknown[] };

let w: MerchandiseWorld;
let doc: { paths: Record<string, Record<string, { requestBody: { content: Record<string, { schema: Schema }> } }>> };
before(async () => {
  w = await merchandiseWorld();
  doc = (await w.t.app.inject({ url: '/openapi.json' })).json();
});
after(() => w.close());

const ROUTES: Array<[method: 'POST', url: string, path: string]> = [
  ['POST', '/api/v1/merchandise', '/api/v1/merchandise'],
  ['POST', '/api/v1/merchandise_sale', '/api/v1/merchandise_sale'],
];

const typeOf = (s: Schema) => (Array.isArray(s.type) ? s.type.find((t) => t !== 'null') : s.type);

/** A value the document says is fine for this property (the validator may still refuse it later for business reasons). */
function goodValue(s: Schema): unknown {
  if (s.enum) return s.enum[0];
  switch (typeOf(s)) {
    case 'object':
      return Object.fromEntries((s.required ?? []).map((k) => [k, goodValue(s.properties![k]!)]));
    case 'integer':
    case 'number':
      return String(Math.max(s.minimum ?? 0, 1));
    default:
      return 'http://a.example/x'.slice(0, s.maxLength ?? 18);
  }
}

for (const [method, url, path] of ROUTES) {
  describe(`${method} ${path}: the validator follows the published schema`, () => {
    const body = () => doc.paths[path]!.post!.requestBody.content['application/x-www-form-urlencoded']!.schema;

    test('exactly the documented required fields are required', async () => {
      const res = await w.call(method, url, {});
      assert.equal(res.statusCode, 400, res.body);
      const expected = body().required!.filter((f) => f !== 'signature');
      assert.deepEqual(Object.keys(res.json().errors).sort(), [...expected].sort());
    });

    test('every documented maxLength, minimum, maximum and enum is enforced on its field', async () => {
      const checked: string[] = [];
      for (const [field, s] of Object.entries(body().properties!)) {
        if (field === 'signature') continue;
        const bad: Array<[string, unknown]> = [];
        if (s.maxLength !== undefined) bad.push(['maxLength', 'h'.repeat(s.maxLength + 1)]);
        if (s.minimum !== undefined) bad.push(['minimum', String(s.minimum - 1)]);
        if (s.maximum !== undefined) bad.push(['maximum', String(s.maximum + 1)]);
        if (s.enum) bad.push(['enum', 'not-in-the-list']);
        for (const [rule, value] of bad) {
          const res = await w.call(method, url, { [field]: value } as Params);
          assert.equal(res.statusCode, 400, `${field} ${rule}`);
          assert.ok(res.json().errors[field], `${field} breaking ${rule} is reported on ${field}: ${res.body}`);
          checked.push(`${field}:${rule}`);
        }
        const ok = await w.call(method, url, { [field]: goodValue(s) } as Params);
        assert.equal(ok.json().errors?.[field], undefined, `${field} = ${JSON.stringify(goodValue(s))} is accepted: ${ok.body}`);
      }
      assert.ok(checked.length >= 5, checked.join());
    });
  });
}
