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
