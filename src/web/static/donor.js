// Donor page: live character counter for the message, the language switcher changes the page as
// soon as a language is picked, and the hand-off to a payment provider (a form posted to the
// provider, e.g. YooMoney quickpay) goes on by itself. Everything works without this script too.
'use strict';
(function () {
  var numbers = new Intl.NumberFormat(document.documentElement.lang || undefined);
  document.querySelectorAll('textarea[data-counter]').forEach(function (area) {
    var counter = document.getElementById(area.getAttribute('data-counter'));
    if (!counter) return;
    var update = function () { counter.textContent = numbers.format(area.value.length); };
    area.addEventListener('input', update);
    update();
  });
  // Typing an own poll option selects the "my own option" choice.
  var own = document.querySelector('input[name="poll_option_title"]');
  var ownChoice = document.querySelector('input[name="poll_option"][value="own"]');
  if (own && ownChoice) own.addEventListener('input', function () { if (own.value) ownChoice.checked = true; });

  document.querySelectorAll('select[data-autosubmit]').forEach(function (select) {
    select.addEventListener('change', function () { select.form.submit(); });
    var button = select.form.querySelector('button[type="submit"]');
    if (button) button.hidden = true;
  });

  // Submitted once: a second submit would open a second payment at the provider.
  var handOff = document.querySelector('form[data-autosubmit-form]');
  if (handOff && !handOff.dataset.sent) {
    handOff.dataset.sent = '1';
    handOff.submit();
  }
})();
