// Donor page: live character counter for the message (the form works without it).
'use strict';
(function () {
  document.querySelectorAll('textarea[data-counter]').forEach(function (area) {
    var counter = document.getElementById(area.getAttribute('data-counter'));
    if (!counter) return;
    var update = function () { counter.textContent = String(area.value.length); };
    area.addEventListener('input', update);
    update();
  });
  // Typing an own poll option selects the "my own option" choice.
  var own = document.querySelector('input[name="poll_option_title"]');
  var ownChoice = document.querySelector('input[name="poll_option"][value="own"]');
  if (own && ownChoice) own.addEventListener('input', function () { if (own.value) ownChoice.checked = true; });
})();
