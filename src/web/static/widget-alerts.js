// OBS alerts widget: one alert at a time, de-duplicated by (type, id), marked shown once displayed.
// Parts, in order: Variations (which look an alert gets), Text (what it says and what is read
// aloud), Renderer (the card), Player (the queue, sound, speech and timing), Feed (the real-time
// channel, or the settings page's preview).
'use strict';
(function () {
  var W = window.OpenAlertsWidget;
  var config = W.config;
  var stage = document.getElementById('stage');
  /** `type:id` of every alert displayed / skipped by this page, oldest first (for debugging and tests). */
  var displayed = [];
  var skipped = [];
  W.displayed = displayed;
  W.skipped = skipped;

  var TYPES = ['donation', 'custom', 'merchandise-sale'];
  /** Length of the enter and exit animations (widget.css), and the pause between alerts. */
  var ANIMATION_MS = 500;
  var GAP_MS = 400;
  var reducedMotion = window.matchMedia && window.matchMedia('(prefers-reduced-motion: reduce)');

  // ---- Variations -------------------------------------------------------------------------------

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
    var factor = a.currency === config.userCurrency ? 1 : (config.toUserCurrency || {})[a.currency];
    return Number(a.amount) * (factor || 1);
  }

  /** Highest minimum amount not above the alert's amount; newest wins a tie. Null: not shown. */
  function pickVariation(type, a) {
    if (config.preview) return config.variations[0] || null;
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

  // ---- Text -------------------------------------------------------------------------------------

  /** Donations without a name are stored as "Anonymous": the stream reads it in the streamer's language. */
  function displayName(username) {
    return !username || username === 'Anonymous' ? W.t('widget.anonymous', undefined, 'Anonymous') : username;
  }

  /** The donor's message as the alert shows it (plain text). */
  function messageText(a) {
    return typeof a.message === 'string' ? a.message : '';
  }

  /** The streamer's template with its placeholders filled in, as plain text (never markup). */
  function fill(template, a) {
    var hasAmount = a.amount !== undefined && a.amount !== null;
    var values = {
      username: displayName(a.username),
      amount: hasAmount ? W.formatMoney(a.amount) : '',
      currency: a.currency || '',
      money: hasAmount ? W.formatMoney(a.amount, a.currency) : '',
      message: messageText(a),
      header: a.header || '',
      bought_amount: a.bought_amount === undefined || a.bought_amount === null ? '' : W.number(a.bought_amount),
    };
    return template.replace(/\{(username|amount|currency|money|message|header|bought_amount)\}/g, function (_m, key) { return values[key]; });
  }

  /**
   * What speech synthesis reads: the message the alert shows, without links (read aloud they are
   * noise, and a donor could make the stream say anything a URL spells) and without markup-looking
   * tags. Empty: nothing to read.
   */
  function speakableText(message) {
    return message
      .replace(/<[^>]*>/g, ' ')
      .replace(/\b(?:[a-z][a-z0-9+.-]*:\/\/|www\.)\S+/gi, ' ')
      .replace(/\b[\w-]+(?:\.[\w-]+)*\.[a-z]{2,}\/\S*/gi, ' ')
      .replace(/\s+/g, ' ')
      .trim();
  }

  // ---- Renderer ---------------------------------------------------------------------------------

  var FONTS = {
    system: 'system-ui, -apple-system, "Segoe UI", Roboto, sans-serif',
    serif: 'Georgia, "Times New Roman", serif',
    monospace: 'ui-monospace, Consolas, "DejaVu Sans Mono", monospace',
    rounded: 'ui-rounded, "Trebuchet MS", "Arial Rounded MT Bold", sans-serif',
    impact: 'Impact, "Arial Black", "DejaVu Sans", sans-serif',
  };

  var httpUrl = function (u) { return typeof u === 'string' && /^https?:\/\//i.test(u) ? u : null; };

  /** The image to show: the alert's own http(s) image (custom alerts may carry one), else the variation's. */
  function imageOf(item) {
    var own = httpUrl(item.alert.image_url);
    if (own) return { src: own, video: false };
    return item.variation.image || null;
  }

  function soundOf(item) {
    return httpUrl(item.alert.sound_url) || item.variation.sound || null;
  }

  /** The alert card; nothing from the alert becomes markup. Looks are CSSOM writes (allowed by the CSP). */
  function render(item) {
    var a = item.alert;
    var v = item.variation;
    var card = W.el('div', 'alert alert-' + item.type + ' layout-' + v.layout);
    card.setAttribute('data-alert', item.key);
    card.style.setProperty('--alert-font', FONTS[v.font_family] || FONTS.system);
    card.style.setProperty('--alert-size', (v.font_size || 28) + 'px');
    if (v.title_color) card.style.setProperty('--alert-title-color', v.title_color);
    if (v.message_color) card.style.setProperty('--alert-message-color', v.message_color);
    var image = imageOf(item);
    if (image && v.layout !== 'text-only') {
      var media;
      if (image.video) {
        media = W.el('video', 'alert-image');
        media.muted = true;
        media.loop = true;
        media.autoplay = true;
        media.playsInline = true;
      } else {
        media = W.el('img', 'alert-image');
        media.alt = '';
      }
      media.src = image.src;
      card.appendChild(media);
    }
    var body = W.el('div', 'alert-body');
    body.appendChild(W.el('div', 'alert-title', fill(v.text_template, a)));
    var message = messageText(a);
    if (message && v.text_template.indexOf('{message}') < 0) body.appendChild(W.el('div', 'alert-message', message));
    card.appendChild(body);
    return card;
  }

  // ---- Player -----------------------------------------------------------------------------------

  var queue = [];
  /** The alert on screen: { item, card, audio, speaking, timer }, or null. */
  var current = null;
  /** Utterances started by this page, for tests and debugging: { text, voice, rate, volume }. */
  var spoken = [];
  W.spoken = spoken;

  function playSound(state) {
    var url = soundOf(state.item);
    // The settings page's preview loops silently; "Send test alert" is how a streamer hears it.
    if (!url || config.preview) return Promise.resolve();
    var audio = new Audio(url);
    audio.volume = Math.max(0, Math.min(1, (state.item.variation.sound_volume === undefined ? 80 : state.item.variation.sound_volume) / 100));
    state.audio = audio;
    return new Promise(function (resolve) {
      audio.addEventListener('ended', resolve);
      audio.addEventListener('error', resolve);
      try {
        var played = audio.play();
        // Autoplay refused or a bad file: the alert still shows, speech still follows.
        if (played && played.catch) played.catch(resolve);
      } catch (e) { resolve(); }
    });
  }

  function pickVoice(name) {
    var voices = window.speechSynthesis.getVoices() || [];
    var lang = (document.documentElement.lang || '').toLowerCase();
    return voices.filter(function (voice) { return name && voice.name === name; })[0]
      || voices.filter(function (voice) { return voice.lang && voice.lang.toLowerCase().indexOf(lang.split('-')[0]) === 0; })[0]
      || null;
  }

  /** Reads the message when the variation asks for it and the amount reaches its TTS minimum. */
  function speak(state) {
    var v = state.item.variation;
    if (config.preview || !v.tts_enabled || !window.speechSynthesis || typeof SpeechSynthesisUtterance === 'undefined') return;
    if (comparableAmount(state.item.type, state.item.alert) + 1e-9 < (v.tts_min_amount || 0)) return;
    var text = speakableText(messageText(state.item.alert));
    if (!text) return;
    var utterance = new SpeechSynthesisUtterance(text);
    utterance.lang = document.documentElement.lang || '';
    var voice = pickVoice(v.tts_voice);
    if (voice) utterance.voice = voice;
    utterance.rate = (v.tts_rate || 100) / 100;
    utterance.volume = Math.max(0, Math.min(1, (v.tts_volume === undefined ? 100 : v.tts_volume) / 100));
    state.speaking = true;
    spoken.push({ key: state.item.key, text: text, voice: voice ? voice.name : '', rate: utterance.rate, volume: utterance.volume });
    window.speechSynthesis.speak(utterance);
  }

  function animationOf(v, which) {
    var name = v[which + '_animation'] || 'fade';
    // Reduced motion: no movement, only the fade.
    if (reducedMotion && reducedMotion.matches && name !== 'none') name = 'fade';
    return which + '-' + name;
  }

  function markShown(item, attempt) {
    W.postJson('shown', { type: item.type, id: item.alert.id }).catch(function () {
      if (attempt < 5 && !W.isStopped()) setTimeout(function () { markShown(item, attempt + 1); }, 1000 * Math.pow(2, attempt));
    });
  }

  function start(item) {
    var card = render(item);
    var state = { item: item, card: card, audio: null, speaking: false, timer: null, done: false };
    current = state;
    // `visible`: on screen until the exit starts (tests and OBS scripts can watch it).
    card.classList.add(animationOf(item.variation, 'enter'), 'visible');
    stage.replaceChildren(card);
    displayed.push(item.key);
    if (!item.alert.is_test && !config.preview) markShown(item, 0);
    // Speech waits for the alert sound, so the two never talk over each other.
    playSound(state).then(function () { if (!state.done) speak(state); });
    state.timer = setTimeout(function () { finish(state); }, item.variation.duration_ms);
  }

  /** Ends the alert on screen now: speech and sound are cut, the exit animation runs, the next alert follows. */
  function finish(state) {
    if (!state || state.done) return;
    state.done = true;
    clearTimeout(state.timer);
    if (state.speaking && window.speechSynthesis) window.speechSynthesis.cancel();
    if (state.audio) state.audio.pause();
    state.card.classList.remove(animationOf(state.item.variation, 'enter'), 'visible');
    state.card.classList.add(animationOf(state.item.variation, 'exit'));
    setTimeout(function () {
      state.card.remove();
      if (current === state) current = null;
      pump();
    }, ANIMATION_MS + GAP_MS);
  }

  function pump() {
    if (current || queue.length === 0 || W.isStopped()) return;
    start(queue.shift());
  }

  var seen = new Set();

  function enqueue(a) {
    if (!a || typeof a !== 'object') return;
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

  /** `type:id` of alerts the streamer skipped while they showed (tests read it). */
  var endedEarly = [];
  W.endedEarly = endedEarly;

  W.player = {
    enqueue: enqueue,
    /** The alert on screen ({ item, card }) or null. */
    current: function () { return current; },
    /** Ends the alert on screen early (as its duration would). */
    finishCurrent: function () { finish(current); },
  };

  // ---- Feed -------------------------------------------------------------------------------------

  /** The streamer saved their variations: alerts from now on use the new ones. */
  function applyVariations(list) {
    if (!Array.isArray(list)) return;
    config.variations = list;
    W.variationsChanged = (W.variationsChanged || 0) + 1;
  }

  // Moderation: control messages on the widget channel (moderation.service skipCurrentAlert).
  // A skip is a live command: one replayed from the channel history while (re)subscribing is old
  // and must not end an alert shown since, so publications delivered with the subscribe reply
  // (centrifuge-js hands them over right after 'subscribed', in the same turn) are ignored.
  var replaying = false;
  function control(a) {
    if (a.reason === 'skip_alert' && !replaying && current && !current.done) {
      endedEarly.push(current.item.key);
      finish(current);
    }
  }
  function onSubscribedControl() {
    replaying = true;
    setTimeout(function () { replaying = false; }, 0);
  }

  function onPublication(data) {
    if (!data || typeof data !== 'object') return;
    if (data.event === 'settings_changed') applyVariations(data.variations);
    else if (data.name === 'control') control(data);
    else enqueue(data);
  }

  function refreshVariations() {
    return W.api('variations').then(function (r) { applyVariations(r.data); }).catch(function () {});
  }

  /** Alerts that arrived while no widget was open, or that recovery could not bring back. */
  function catchUp() {
    return W.api('unshown').then(function (r) { r.data.forEach(enqueue); }).catch(function () {});
  }

  /**
   * The settings page's preview: the same card and player, with a sample alert again and again.
   * The page sends the form's current values (same origin only) so the preview follows edits.
   */
  function runPreview() {
    var n = 0;
    document.body.classList.add('preview');
    function again() {
      if (!current && queue.length === 0) enqueue(Object.assign({}, config.sample, { id: 'preview-' + (++n) }));
    }
    window.addEventListener('message', function (event) {
      if (event.origin !== location.origin || !event.data || event.data.type !== 'openalerts-preview') return;
      applyVariations([Object.assign({}, config.variations[0], event.data.variation)]);
      queue.length = 0;
      if (current) finish(current);
    });
    again();
    setInterval(again, 500);
  }

  if (config.preview) {
    runPreview();
    return;
  }

  // Variation changes arrive on the channel (`settings_changed`); a (re)subscription reloads them
  // in case such a publication was missed while offline. No polling.
  W.subscribe(onPublication, function () {
    onSubscribedControl();
    refreshVariations().then(catchUp);
  });
  W.onStop(function () {
    queue.length = 0;
    if (current) finish(current);
    stage.replaceChildren();
  });
})();
