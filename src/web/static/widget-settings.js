// Widget settings: copy buttons for the widget URLs (confirmations: dashboard.js, `data-confirm`).
'use strict';
(function () {
  document.querySelectorAll('button[data-copy]').forEach(function (button) {
    button.addEventListener('click', function () {
      var input = document.getElementById(button.getAttribute('data-copy'));
      if (!input) return;
      var done = function () {
        var label = button.textContent;
        button.textContent = button.getAttribute('data-copied') || 'Copied';
        setTimeout(function () { button.textContent = label; }, 1500);
      };
      if (navigator.clipboard && window.isSecureContext) {
        navigator.clipboard.writeText(input.value).then(done, function () { input.select(); });
      } else {
        input.select();
        try { if (document.execCommand('copy')) done(); } catch (e) { /* selected for manual copy */ }
      }
    });
  });
})();

// Variation form: refuse an over-large file before it is sent, pick "uploaded file" when a file is
// chosen, offer this browser's speech voices, and keep the preview frame in step with the form.
(function () {
  var form = document.querySelector('form.variation-form');
  if (!form) return;
  var frame = document.getElementById('variation-preview');
  var blobs = {};

  form.querySelectorAll('input[type=file]').forEach(function (input) {
    input.addEventListener('change', function () {
      var file = input.files && input.files[0];
      var max = Number(input.getAttribute('data-max-bytes'));
      input.setCustomValidity('');
      if (file && max && file.size > max) {
        input.setCustomValidity(input.getAttribute('data-too-large') || 'File too large');
        input.reportValidity();
        input.value = '';
        return;
      }
      var kind = input.name.replace('_file', '');
      if (file) {
        var radio = form.querySelector('input[name="' + kind + '_source"][value="upload"]');
        if (radio) radio.checked = true;
        if (blobs[kind]) URL.revokeObjectURL(blobs[kind].src);
        blobs[kind] = { src: URL.createObjectURL(file), video: /^video\//.test(file.type) };
      }
      update();
    });
  });

  form.addEventListener('submit', function (event) {
    var tooLarge = Array.prototype.some.call(form.querySelectorAll('input[type=file]'), function (input) { return !input.checkValidity(); });
    if (tooLarge) event.preventDefault();
  });

  var voices = document.getElementById('tts-voices');
  function listVoices() {
    if (!voices || !window.speechSynthesis) return;
    voices.replaceChildren();
    window.speechSynthesis.getVoices().forEach(function (voice) {
      var option = document.createElement('option');
      option.value = voice.name;
      option.label = voice.name + ' (' + voice.lang + ')';
      voices.appendChild(option);
    });
  }
  if (window.speechSynthesis) {
    listVoices();
    window.speechSynthesis.addEventListener('voiceschanged', listVoices);
  }

  var value = function (name) { var field = form.elements[name]; return field ? field.value : ''; };
  var checked = function (name) { var field = form.elements[name]; return Boolean(field && field.checked); };
  var number = function (name, fallback) { var n = Number(value(name)); return value(name) !== '' && isFinite(n) ? n : fallback; };

  /** Where the preview takes the image from, as the widget would (an unsaved file: its blob URL). */
  function image() {
    var source = value('image_source');
    if (source === 'default') return { src: '/static/alert-default.svg', video: false };
    if (source === 'url') return /^https?:\/\//i.test(value('image_url')) ? { src: value('image_url'), video: false } : null;
    if (source === 'upload') return blobs.image; // none chosen yet: the saved file, which the preview already shows
    return null;
  }

  function update() {
    if (!frame || !frame.contentWindow) return;
    var variation = {
      layout: value('layout'), text_template: value('text_template') || ' ', duration_ms: Math.max(1000, number('duration_ms', 8000)),
      enter_animation: value('enter_animation'), exit_animation: value('exit_animation'), font_family: value('font_family'),
      font_size: number('font_size', 28), title_color: value('title_color'), message_color: value('message_color'), enabled: 1,
      tts_enabled: checked('tts_enabled') ? 1 : 0,
    };
    var img = image();
    // undefined: keep the saved upload the preview already shows.
    if (img !== undefined) variation.image = img;
    frame.contentWindow.postMessage({ type: 'openalerts-preview', variation: variation }, location.origin);
  }

  var timer = null;
  form.addEventListener('input', function () { clearTimeout(timer); timer = setTimeout(update, 250); });
  form.addEventListener('change', function () { clearTimeout(timer); timer = setTimeout(update, 250); });
})();
