// Shared by the OBS widget pages (alerts, goal, poll); needs common.js and i18n.js. No inline script anywhere
// (CSP script-src 'self'): the page's data comes from <script type="application/json" id="widget-config">.
'use strict';
(function () {
  var common = window.OpenAlertsCommon;
  var el = common.el;
  var config = JSON.parse(document.getElementById('widget-config').textContent);
  var stopped = false;
  var onStop = [];

  function withToken(path) {
    return '/widget/api/' + path + (path.indexOf('?') >= 0 ? '&' : '?') + 'token=' + encodeURIComponent(config.token);
  }

  /** The widget token was regenerated (or the account disabled): stop for good, show nothing. */
  function revoke() {
    if (stopped) return;
    stopped = true;
    document.body.setAttribute('data-state', 'revoked');
    onStop.forEach(function (fn) { try { fn(); } catch (e) { /* stopping anyway */ } });
    if (window.console) console.warn('OpenAlerts widget: this widget URL is no longer valid; copy it again from the dashboard.');
  }

  function api(path, options) {
    return fetch(withToken(path), Object.assign({ cache: 'no-store', credentials: 'omit' }, options || {})).then(function (response) {
      if (response.status === 401 || response.status === 404) {
        revoke();
        throw new Error('widget token no longer valid');
      }
      if (!response.ok) throw new Error('widget API ' + path + ': HTTP ' + response.status);
      return response.json();
    });
  }

  function postJson(path, body) {
    return api(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  }

  function fetchTokens() {
    return api('token').catch(function (err) {
      // centrifuge-js: an UnauthorizedError from getToken disconnects without reconnecting.
      if (stopped) throw new Centrifuge.UnauthorizedError('widget token no longer valid');
      throw err;
    });
  }

  /**
   * One centrifuge-js 5 client subscribed to the page's channel. Reconnects with back-off and
   * recovers missed publications from the channel history (the server keeps it for `$widget:`,
   * `$goals:` and `$polls:`). `onSubscribed(ctx)` runs on every (re)subscription, so a page can
   * reload its state when recovery was not possible.
   */
  function subscribe(onPublication, onSubscribed) {
    var client = new Centrifuge(common.websocketUrl(), {
      token: config.connectionToken,
      getToken: function () { return fetchTokens().then(function (t) { return t.connection_token; }); },
      minReconnectDelay: 200,
      maxReconnectDelay: 5000,
    });
    var sub = client.newSubscription(config.channel, {
      token: config.channelToken,
      getToken: function () { return fetchTokens().then(function (t) { return t.channels[config.channel]; }); },
    });
    sub.on('publication', function (ctx) { if (!stopped) onPublication(ctx.data, ctx); });
    sub.on('subscribed', function (ctx) {
      window.OpenAlertsWidget.lastSubscribed = { wasRecovering: ctx.wasRecovering, recovered: ctx.recovered };
      document.body.setAttribute('data-state', 'live');
      if (!stopped && onSubscribed) onSubscribed(ctx);
    });
    client.on('disconnected', function () { if (!stopped) document.body.setAttribute('data-state', 'offline'); });
    client.on('connecting', function () { if (!stopped) document.body.setAttribute('data-state', 'connecting'); });
    sub.subscribe();
    client.connect();
    onStop.push(function () { client.disconnect(); });
    // An open widget learns about a regenerated token at least this often.
    var timer = setInterval(function () { api('token').catch(function () {}); }, config.tokenCheckMs);
    onStop.push(function () { clearInterval(timer); });
    return client;
  }

  /**
   * Shows the page's state, then keeps it live: `onEvent` for each publication, `reload` (from the
   * widget API) whenever a (re)subscription could not recover what was missed.
   */
  function live(render, onEvent, reload) {
    render();
    subscribe(onEvent, function (ctx) { if (!(ctx.wasRecovering && ctx.recovered)) reload(); });
  }

  /** A progress bar filled to `percent`, clamped to 0–100. */
  function bar(percent) {
    var node = el('div', 'bar');
    var fill = el('div', 'bar-fill');
    // CSSOM writes are allowed under style-src 'self' (only style attributes in markup are not).
    fill.style.width = Math.max(0, Math.min(100, percent)).toFixed(2) + '%';
    node.appendChild(fill);
    return node;
  }

  /** Money and numbers in the streamer's language (i18n.js): `1 234,50 ₽`, whole amounts without decimals. */
  function formatMoney(amount, currency) {
    return window.OpenAlertsI18n.money(amount, currency, true);
  }

  window.OpenAlertsWidget = {
    config: config,
    api: api,
    postJson: postJson,
    subscribe: subscribe,
    live: live,
    el: el,
    bar: bar,
    formatMoney: formatMoney,
    t: window.OpenAlertsI18n.t,
    number: window.OpenAlertsI18n.number,
    isStopped: function () { return stopped; },
    onStop: function (fn) { onStop.push(fn); },
  };
})();
