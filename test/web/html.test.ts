import assert from 'node:assert/strict';
import { test } from 'node:test';
import { html, jsonForScript, unsafeRaw } from '../../src/web/html.js';

test('interpolations are escaped; nested templates are not escaped twice', () => {
  const name = '<img src=x onerror="alert(1)">\'`&';
  const out = html`<p title="${name}">${name}</p>${html`<b>${'<i>'}</b>`}${unsafeRaw('<hr>')}`.value;
  assert.equal(out, '<p title="&lt;img src=x onerror=&quot;alert(1)&quot;&gt;&#39;&#96;&amp;">&lt;img src=x onerror=&quot;alert(1)&quot;&gt;&#39;&#96;&amp;</p><b>&lt;i&gt;</b><hr>');
  assert.equal(html`${null}${undefined}${false}${[1, '<', html`&amp;`]}`.value, '1&lt;&amp;');
});

test('JSON for scripts cannot close the script element', () => {
  const out = jsonForScript({ message: '</script><script>alert(1)</script>\u2028&' }).value;
  assert.equal(out.includes('</script>'), false);
  assert.equal(out.includes('<'), false);
  assert.deepEqual(JSON.parse(out), { message: '</script><script>alert(1)</script>\u2028&' });
});
