// Dashboard behaviour for every logged-in page. Loaded as a deferred file script (no inline code,
// so a `script-src 'self'` policy holds). Page data comes from <script type="application/json"
// id="page-data">; every text from the server or a publication is set with textContent, never HTML.
(function () {
  'use strict';

  var data = readPageData();
  // Messages, money and times in the streamer's language (i18n.js, a module that runs first).
  var I18n = window.OpenAlertsI18n;
  var t = I18n.t;

  function readPageData() {
    var el = document.getElementById('page-data');
    if (!el) return null;
    try {
      return JSON.parse(el.textContent || 'null');
    } catch (e) {
      return null;
    }
  }

  var el = window.OpenAlertsCommon.el;

  function money(major, currency) {
    return I18n.money(major, currency);
  }

  // --- Confirmations: <form data-confirm="question"> -------------------------------------------
  document.addEventListener('submit', function (event) {
    var form = event.target;
    if (form instanceof HTMLFormElement && form.dataset.confirm && !window.confirm(form.dataset.confirm)) event.preventDefault();
  }, true);

  // --- Times: the server writes UTC; show the viewer's local time -------------------------------
  // In the page's language and the viewer's time zone.
  var dateTimeFormat = new Intl.DateTimeFormat(I18n.locale, { year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' });
  function localizeTime(node) {
    var when = new Date(node.getAttribute('datetime'));
    if (isNaN(when.getTime())) return;
    if (node.hasAttribute('data-relative')) {
      // "3 минуты назад", with the full local time on hover; kept current below.
      node.title = dateTimeFormat.format(when);
      node.textContent = I18n.relative(when);
      return;
    }
    node.title = node.textContent;
    node.textContent = dateTimeFormat.format(when);
  }
  document.querySelectorAll('time[data-local], time[data-relative]').forEach(localizeTime);
  setInterval(function () { document.querySelectorAll('time[data-relative]').forEach(localizeTime); }, 30000);

  function pad(n) {
    return (n < 10 ? '0' : '') + n;
  }
  function localInputValue(date) {
    return date.getFullYear() + '-' + pad(date.getMonth() + 1) + '-' + pad(date.getDate()) + 'T' + pad(date.getHours()) + ':' + pad(date.getMinutes());
  }
  // datetime-local inputs: shown in local time; on submit, tz_offset tells the server the offset.
  document.querySelectorAll('input[type="datetime-local"][data-utc]').forEach(function (input) {
    if (input.value) {
      var utc = new Date(input.value + ':00Z');
      if (!isNaN(utc.getTime())) input.value = localInputValue(utc);
    }
    var hint = input.parentElement && input.parentElement.querySelector('[data-tz-hint]');
    if (hint) hint.textContent = t('js.local_time');
    input.form.addEventListener('submit', function () {
      var offset = input.form.querySelector('input[name="tz_offset"]');
      if (!offset) return;
      var local = input.value ? new Date(input.value) : new Date();
      offset.value = String(-local.getTimezoneOffset());
    });
  });

  // --- Live status badge --------------------------------------------------------------------------
  var statusEl = document.getElementById('live-status');
  function setStatus(state, text) {
    if (!statusEl) return;
    statusEl.dataset.state = state;
    statusEl.textContent = text;
  }

  // --- Donations feed (overview) ------------------------------------------------------------------
  var feed = document.getElementById('donation-feed');
  var FEED_MAX = 20;

  function showDonation(d) {
    if (!feed || !d || typeof d.id !== 'number') return;
    if (feed.querySelector('li[data-id="' + d.id + '"]')) return; // at-least-once delivery: once on screen
    var item = el('li', 'donation fresh');
    item.dataset.id = String(d.id);
    var head = el('div', 'donation-head');
    head.appendChild(el('strong', 'donor', d.username));
    head.appendChild(el('span', 'amount', money(d.amount, d.currency)));
    item.appendChild(head);
    if (d.message) item.appendChild(el('p', 'message', d.message));
    var meta = el('div', 'meta');
    var time = el('time', null, d.created_at + ' UTC');
    time.setAttribute('datetime', String(d.created_at).replace(' ', 'T') + 'Z');
    time.setAttribute('data-relative', '');
    localizeTime(time);
    meta.appendChild(time);
    if (d.payin_system && d.payin_system.title) {
      meta.appendChild(document.createTextNode(' · '));
      meta.appendChild(el('span', 'payin', d.payin_system.title));
    }
    item.appendChild(meta);
    feed.insertBefore(item, feed.firstChild);
    while (feed.children.length > FEED_MAX) feed.removeChild(feed.lastChild);
    var empty = document.getElementById('feed-empty');
    if (empty) empty.hidden = true;
  }

  var testForm = document.getElementById('test-alert-form');
  if (testForm && data && data.csrf && window.fetch) {
    testForm.addEventListener('submit', function (event) {
      event.preventDefault();
      var button = testForm.querySelector('button');
      button.disabled = true;
      fetch(testForm.action, { method: 'POST', credentials: 'same-origin', headers: { accept: 'application/json', 'x-csrf-token': data.csrf } })
        .then(function (res) {
          if (!res.ok) throw new Error('HTTP ' + res.status);
          return res.json();
        })
        .then(function (body) {
          button.textContent = t('js.test_alert.sent');
          tickStep('test_alert_sent');
          // The publication normally shows it first; without a live connection, show the reply.
          var delay = statusEl && statusEl.dataset.state === 'connected' ? 3000 : 0;
          setTimeout(function () { showDonation(body.data); }, delay);
        })
        .catch(function () {
          button.textContent = t('js.test_alert.failed');
        })
        .finally(function () {
          setTimeout(function () {
            button.disabled = false;
            button.textContent = t('js.test_alert.send');
          }, 1200);
        });
    });
  }

  // --- Overview: copy buttons and the first-hour checklist ---------------------------------------
  // Ticks a step the moment it happens here; the server records it too, so the next load agrees.
  function tickStep(step) {
    var list = document.getElementById('checklist');
    var item = list && list.querySelector('li[data-step="' + step + '"]');
    if (!item || item.dataset.done === '1') return;
    item.dataset.done = '1';
    var state = item.querySelector('.state');
    if (state) state.textContent = t('js.checklist.done');
    var done = list.querySelectorAll('li[data-done="1"]').length;
    var total = Number(list.dataset.total);
    var count = document.getElementById('checklist-count');
    if (count) count.textContent = t('js.checklist.count', { done: done, total: total });
    var all = document.getElementById('checklist-all');
    if (all && done === total) all.hidden = false;
  }

  function copied(button) {
    var label = button.textContent;
    button.textContent = button.dataset.copied || label;
    setTimeout(function () { button.textContent = label; }, 1500);
    var report = button.dataset.copyReport;
    if (report && data && data.csrf && window.fetch) {
      fetch(report, { method: 'POST', credentials: 'same-origin', headers: { accept: 'application/json', 'x-csrf-token': data.csrf } })
        .then(function (res) { if (res.ok) tickStep('link_shared'); })
        .catch(function () { /* the step ticks on the next successful copy or donation */ });
    }
  }

  document.querySelectorAll('button[data-copy-from]').forEach(function (button) {
    button.addEventListener('click', function () {
      var input = document.getElementById(button.dataset.copyFrom);
      if (!input) return;
      if (navigator.clipboard && window.isSecureContext) {
        navigator.clipboard.writeText(input.value).then(function () { copied(button); }, function () { input.select(); });
      } else {
        // Plain http on a LAN has no Clipboard API: select it, and copy the old way when allowed.
        input.select();
        try { if (document.execCommand('copy')) copied(button); } catch (e) { /* selected for a manual copy */ }
      }
    });
  });

  // --- Goals --------------------------------------------------------------------------------------
  function goalPercent(g) {
    return g.goal_amount > 0 ? Math.min(100, Math.floor((g.raised_amount / g.goal_amount) * 100)) : 0;
  }

  function progressText(g) {
    return t('js.goal_progress', { raised: money(g.raised_amount, g.currency), goal: money(g.goal_amount, g.currency), percent: I18n.number(goalPercent(g) / 100, { style: 'percent' }) });
  }

  function progressNodes(g) {
    return [el('div', 'progress-line', progressText(g)), el('progress')];
  }

  function updateGoal(g) {
    var list = document.getElementById('active-goals');
    if (!list || !g || typeof g.id !== 'number') return;
    var card = list.querySelector('[data-goal-id="' + g.id + '"]');
    if (!card) {
      if (!g.is_active) return;
      card = el('article', 'item goal');
      card.dataset.goalId = String(g.id);
      var head = el('div', 'item-head');
      head.appendChild(el('h3', 'goal-title', g.title));
      head.appendChild(el('span', 'tag state', t('js.state.running')));
      card.appendChild(head);
      progressNodes(g).forEach(function (n) { card.appendChild(n); });
      card.appendChild(el('p', 'meta', t('js.started_elsewhere_goal')));
      list.insertBefore(card, list.firstChild);
      var empty = document.getElementById('goals-empty');
      if (empty) empty.hidden = true;
    }
    var set = function (selector, text) {
      var node = card.querySelector(selector);
      if (node) node.textContent = text;
    };
    set('.goal-title', g.title);
    set('.progress-line', progressText(g));
    var bar = card.querySelector('progress');
    if (bar) {
      bar.max = Math.max(Number(g.goal_amount), 0.01);
      bar.value = Math.min(Number(g.raised_amount), Number(g.goal_amount));
    }
    if (!g.is_active) {
      card.classList.add('ended');
      set('.state', t('js.state.ended', { kind: 'goal' }));
      card.querySelectorAll('details.edit, form.close-form').forEach(function (n) { n.remove(); });
    }
    card.classList.remove('flash');
    void card.offsetWidth; // restart the highlight animation
    card.classList.add('flash');
  }

  // --- Polls --------------------------------------------------------------------------------------
  function renderOptions(card, poll) {
    var type = poll.type || card.dataset.type;
    var currency = card.dataset.currency || '';
    var list = el('ol', 'options');
    (poll.options || []).forEach(function (o) {
      var item = el('li', 'option' + (o.is_winner ? ' winner' : ''));
      item.dataset.optionId = String(o.id);
      var head = el('div', 'option-head');
      head.appendChild(el('span', 'option-title', o.title));
      var value = type === 'sum' ? (currency ? money(o.amount_value, currency) : I18n.number(o.amount_value)) : t('js.poll_votes', { count: Number(o.amount_value) });
      head.appendChild(el('span', 'option-value', value + ' · ' + I18n.number(Number(o.amount_percent) / 100, { style: 'percent', maximumFractionDigits: 2 })));
      item.appendChild(head);
      var bar = el('progress');
      bar.max = 100;
      bar.value = Number(o.amount_percent);
      item.appendChild(bar);
      list.appendChild(item);
    });
    var old = card.querySelector('ol.options');
    if (old) old.replaceWith(list);
    else card.appendChild(list);
  }

  function updatePoll(p) {
    var holder = document.getElementById('active-poll');
    if (!holder || !p || typeof p.id !== 'number') return;
    var card = holder.querySelector('[data-poll-id="' + p.id + '"]');
    if (!card) {
      if (!p.is_active) return;
      card = el('article', 'item poll');
      card.dataset.pollId = String(p.id);
      card.dataset.type = p.type;
      var head = el('div', 'item-head');
      head.appendChild(el('h3', null, p.title));
      head.appendChild(el('span', 'tag state', t('js.state.running')));
      card.appendChild(head);
      card.appendChild(el('p', 'meta', t('js.started_elsewhere_poll')));
      holder.insertBefore(card, holder.firstChild);
      var none = document.getElementById('poll-empty');
      if (none) none.hidden = true;
    }
    card.dataset.type = p.type;
    renderOptions(card, p);
    if (!p.is_active) {
      card.classList.add('ended');
      var state = card.querySelector('.state');
      if (state) state.textContent = t('js.state.ended', { kind: 'poll' });
      card.querySelectorAll('details.edit, form.close-form').forEach(function (n) { n.remove(); });
    }
  }

  // --- Real-time connection (centrifuge-js 5, our /connection/websocket) ------------------------
  function postJson(url, body) {
    return fetch(url, {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'content-type': 'application/json', accept: 'application/json', 'x-csrf-token': data.csrf },
      body: JSON.stringify(body),
    }).then(function (res) {
      // Logged out or deactivated: stop asking (an UnauthorizedError ends the retries).
      if (res.status === 401 || res.status === 403) throw new window.Centrifuge.UnauthorizedError('session ended');
      if (!res.ok) throw new Error('token refresh failed: HTTP ' + res.status);
      return res.json();
    }).then(function (json) {
      return json.token;
    });
  }

  var HANDLERS = [
    { prefix: '$alerts:donation_', handle: showDonation },
    { prefix: '$goals:goal_', handle: updateGoal },
    { prefix: '$polls:poll_', handle: updatePoll },
  ];

  function startRealtime(rt) {
    var client = new window.Centrifuge(window.OpenAlertsCommon.websocketUrl(), {
      token: rt.token,
      getToken: function () { return postJson(rt.tokenUrl, {}); },
    });
    client.on('connecting', function () { setStatus('connecting', t('js.live.connecting')); });
    client.on('connected', function () { setStatus('connected', t('js.live.connected')); });
    client.on('disconnected', function () { setStatus('disconnected', t('js.live.offline')); });
    rt.channels.forEach(function (ch) {
      var handler = HANDLERS.filter(function (h) { return ch.channel.indexOf(h.prefix) === 0; })[0];
      if (!handler) return;
      var sub = client.newSubscription(ch.channel, {
        token: ch.token,
        getToken: function () { return postJson(rt.tokenUrl, { channel: ch.channel }); },
      });
      sub.on('publication', function (ctx) { handler.handle(ctx.data); });
      sub.subscribe();
    });
    client.connect();
    window.addEventListener('pagehide', function () { client.disconnect(); });
  }

  if (data && data.realtime) {
    if (window.Centrifuge) startRealtime(data.realtime);
    else setStatus('disconnected', t('js.live.offline'));
  }
})();
