// OBS poll widget: options with bars and percentages, winners highlighted; live from $polls:poll_<user_id>.
'use strict';
(function () {
  var W = window.OpenAlertsWidget;
  var config = W.config;
  var stage = document.getElementById('stage');
  var poll = config.poll;

  function render() {
    stage.replaceChildren();
    if (!poll) return;
    var card = W.el('div', 'poll' + (poll.is_active ? '' : ' poll-ended'));
    card.setAttribute('data-poll', String(poll.id));
    card.appendChild(W.el('div', 'poll-title', poll.title));
    var list = W.el('ol', 'poll-options');
    var anyVotes = poll.options.some(function (o) { return Number(o.amount_value) > 0; });
    poll.options.forEach(function (o) {
      var winner = anyVotes && o.is_winner === 1;
      var item = W.el('li', 'poll-option' + (winner ? ' winner' : ''));
      item.setAttribute('data-option', String(o.id));
      var head = W.el('div', 'poll-option-head');
      head.appendChild(W.el('span', 'poll-option-title', o.title));
      var value = poll.type === 'sum' ? W.formatMoney(o.amount_value) : W.t('widget.poll_count', { count: Number(o.amount_value) });
      head.appendChild(W.el('span', 'poll-option-value', value + ' · ' + W.number(Math.round(Number(o.amount_percent)) / 100, { style: 'percent' })));
      item.appendChild(head);
      item.appendChild(W.bar(Number(o.amount_percent)));
      list.appendChild(item);
    });
    card.appendChild(list);
    if (!poll.is_active) card.appendChild(W.el('div', 'poll-state', W.t('widget.poll_closed')));
    stage.appendChild(card);
  }

  function onEvent(event) {
    if (!event || typeof event.id !== 'number' || !Array.isArray(event.options)) return;
    // A newer poll replaces the one shown; late events of an older poll are ignored.
    if (poll && event.id < poll.id) return;
    poll = event;
    render();
  }

  function reload() {
    W.api('poll').then(function (r) {
      if (r.data) poll = r.data;
      render();
    }).catch(function () {});
  }

  W.live(render, onEvent, reload);
})();
