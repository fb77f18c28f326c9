// OBS alerts widget: one alert at a time, de-duplicated by (type, id), marked shown once displayed.
'use strict';
(function () {
  var W = window.OpenAlertsWidget;
  var config = W.config;
  var stage = document.getElementById('stage');
  var seen = new Set();
  var queue = [];
  var showing = false;
  /** `type:id` of every alert displayed / skipped by this page, oldest first (for debugging and tests). */
  var displayed = [];
  var skipped = [];
  W.displayed = displayed;
  W.skipped = skipped;

  var TYPES = ['donation', 'custom', 'merchandise-sale'];
  var GAP_MS = 400;

  /** Payloads carry `name`; anything older or odd is recognised by its fields. */
  function alertType(a) {
    if (TYPES.indexOf(a.name) >= 0) return a.name;
    if ('bought_amount' in a) return 'merchandise-sale';
    if ('header' in a || ('external_id' in a && !('amount' in a))) return 'custom';
    if ('amount' in a && 'username' in a) return 'donation';
    return null;
  }

  /** The alert's amount in the streamer's main currency, which minimum amounts use. */
  function comparableAmount(type, a) {
    if (type === 'custom') return 0;
    if (type === 'donation' && a.amount_in_user_currency !== undefined && a.amount_in_user_currency !== null) return Number(a.amount_in_user_currency);
    var factor = a.currency === config.userCurrency ? 1 : config.toUserCurrency[a.currency];
    return Number(a.amount) * (factor || 1);
  }

  /** Highest minimum amount not above the alert's amount; newest wins a tie. Null: not shown. */
  function pickVariation(type, a) {
    var candidates = config.variations.filter(function (v) { return v.type === type; });
    if (a.is_test && a.variation_id) {
      var forced = candidates.filter(function (v) { return v.id === a.variation_id; })[0];
      if (forced) return forced;
    }
    var amount = comparableAmount(type, a);
    var best = null;
    candidates.forEach(function (v) {
      if (!v.enabled || v.min_amount > amount + 1e-9) return;
      if (!best || v.min_amount > best.min_amount || (v.min_amount === best.min_amount && v.id > best.id)) best = v;
    });
    return best;
  }

  /** Donations without a name are stored as "Anonymous": the stream reads it in the streamer's language. */
  function displayName(username) {
    return !username || username === 'Anonymous' ? W.t('widget.anonymous', undefined, 'Anonymous') : username;
  }

  /** The streamer's template with its placeholders filled in, as plain text (never markup). */
  function fill(template, a) {
    var hasAmount = a.amount !== undefined && a.amount !== null;
    var values = {
      username: displayName(a.username),
      amount: hasAmount ? W.formatMoney(a.amount) : '',
      currency: a.currency || '',
      money: hasAmount ? W.formatMoney(a.amount, a.currency) : '',
      message: a.message || '',
      header: a.header || '',
      bought_amount: a.bought_amount === undefined || a.bought_amount === null ? '' : W.number(a.bought_amount),
    };
    return template.replace(/\{(username|amount|currency|money|message|header|bought_amount)\}/g, function (_m, key) { return values[key]; });
  }

  var httpUrl = function (u) { return typeof u === 'string' && /^https?:\/\//i.test(u) ? u : null; };

  function render(item) {
    var a = item.alert;
    var v = item.variation;
    var card = W.el('div', 'alert alert-' + item.type + ' layout-' + v.layout);
    card.setAttribute('data-alert', item.key);
    var image = httpUrl(a.image_url) || httpUrl(v.image_url);
    if (image && v.layout !== 'text-only') {
      var img = W.el('img', 'alert-image');
      img.alt = '';
      img.src = image;
      card.appendChild(img);
    }
    var body = W.el('div', 'alert-body');
    body.appendChild(W.el('div', 'alert-title', fill(v.text_template, a)));
    if (a.message && v.text_template.indexOf('{message}') < 0) body.appendChild(W.el('div', 'alert-message', a.message));
    card.appendChild(body);
    return card;
  }

  function playSound(item) {
    var url = httpUrl(item.alert.sound_url) || httpUrl(item.variation.sound_url);
    if (!url) return;
    try {
      var audio = new Audio(url);
      var played = audio.play();
      if (played && played.catch) played.catch(function () { /* autoplay refused or bad file: the alert still shows */ });
    } catch (e) { /* no audio support */ }
  }

  function markShown(item, attempt) {
    W.postJson('shown', { type: item.type, id: item.alert.id }).catch(function () {
      if (attempt < 5 && !W.isStopped()) setTimeout(function () { markShown(item, attempt + 1); }, 1000 * Math.pow(2, attempt));
    });
  }

  /** Ends the alert on screen early ("skip current alert"); null while nothing shows. */
  var endCurrent = null;
  /** `type:id` of alerts the streamer skipped while they showed (tests read it). */
  var endedEarly = [];
  W.endedEarly = endedEarly;

  function pump() {
    if (showing || queue.length === 0 || W.isStopped()) return;
    var item = queue.shift();
    showing = true;
    var card = render(item);
    stage.replaceChildren(card);
    // Next frame, so the CSS transition runs.
    requestAnimationFrame(function () { card.classList.add('visible'); });
    playSound(item);
    displayed.push(item.key);
    if (!item.alert.is_test) markShown(item, 0);
    var timer = setTimeout(finish, item.variation.duration_ms);
    function finish() {
      clearTimeout(timer);
      endCurrent = null;
      card.classList.remove('visible');
      setTimeout(function () {
        card.remove();
        showing = false;
        pump();
      }, GAP_MS);
    }
    endCurrent = function () {
      endedEarly.push(item.key);
      finish();
    };
  }

  // --- Moderation: control messages on the widget channel (moderation.service skipCurrentAlert).
  // A skip is a live command: one replayed from the channel history while (re)subscribing is old
  // and must not end an alert shown since, so publications delivered with the subscribe reply
  // (centrifuge-js hands them over right after 'subscribed', in the same turn) are ignored.
  var replaying = false;
  function control(a) {
    if (a.reason === 'skip_alert' && !replaying && endCurrent) endCurrent();
  }
  function onSubscribedControl() {
    replaying = true;
    setTimeout(function () { replaying = false; }, 0);
  }
  // --- end moderation

  function enqueue(a) {
    if (!a || typeof a !== 'object') return;
    if (a.name === 'control') return control(a);
    var type = alertType(a);
    if (!type || a.id === undefined || a.id === null) return;
    var key = type + ':' + a.id;
    // Live publications, recovered ones and the catch-up list overlap; each alert counts once.
    if (seen.has(key)) return;
    seen.add(key);
    if (a.is_shown === 1 && !a.is_test) return;
    var variation = pickVariation(type, a);
    if (!variation) {
      // Spec §1: e.g. custom alerts show only with a Custom-alerts variation.
      skipped.push(key);
      return;
    }
    queue.push({ key: key, type: type, alert: a, variation: variation });
    pump();
  }

  function refreshVariations() {
    return W.api('variations').then(function (r) { config.variations = r.data; }).catch(function () {});
  }

  /** Alerts that arrived while no widget was open, or that recovery could not bring back. */
  function catchUp() {
    return W.api('unshown').then(function (r) { r.data.forEach(enqueue); }).catch(function () {});
  }

  W.subscribe(enqueue, function () {
    onSubscribedControl();
    refreshVariations().then(catchUp);
  });
  var timer = setInterval(refreshVariations, config.tokenCheckMs);
  W.onStop(function () {
    clearInterval(timer);
    queue.length = 0;
    stage.replaceChildren();
  });
})();
