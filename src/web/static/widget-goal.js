// OBS goal widget: title, raised / goal with currency, progress bar; live from $goals:goal_<user_id>.
'use strict';
(function () {
  var W = window.OpenAlertsWidget;
  var config = W.config;
  var stage = document.getElementById('stage');
  var goal = config.goal;

  function render() {
    stage.replaceChildren();
    if (!goal) return;
    var raised = Number(goal.raised_amount);
    var target = Number(goal.goal_amount);
    var percent = target > 0 ? Math.max(0, Math.min(100, (raised / target) * 100)) : 0;
    var card = W.el('div', 'goal' + (goal.is_active ? '' : ' goal-ended') + (raised >= target ? ' goal-reached' : ''));
    card.setAttribute('data-goal', String(goal.id));
    card.appendChild(W.el('div', 'goal-title', goal.title));
    var bar = W.bar(percent);
    bar.setAttribute('role', 'progressbar');
    bar.setAttribute('aria-valuemin', '0');
    bar.setAttribute('aria-valuemax', '100');
    bar.setAttribute('aria-valuenow', String(Math.round(percent)));
    bar.appendChild(W.el('div', 'bar-label', W.number(Math.floor(percent) / 100, { style: 'percent' })));
    card.appendChild(bar);
    card.appendChild(W.el('div', 'goal-amounts', W.formatMoney(raised, goal.currency) + ' / ' + W.formatMoney(target, goal.currency)));
    if (!goal.is_active) card.appendChild(W.el('div', 'goal-state', raised >= target ? W.t('widget.goal_reached') : W.t('widget.goal_ended')));
    stage.appendChild(card);
  }

  function onEvent(event) {
    if (!event || typeof event.id !== 'number') return;
    if (config.goalId !== null) {
      if (event.id !== config.goalId) return;
    } else if (goal && event.id !== goal.id) {
      // Following the newest running goal: a newer goal takes over; others are ignored.
      if (!(event.reason === 'created' || (event.is_active && event.id > goal.id && !goal.is_active))) return;
    }
    goal = event;
    render();
  }

  function reload() {
    var path = 'goal' + (config.goalId !== null ? '?goal=' + config.goalId : '');
    W.api(path).then(function (r) {
      if (r.data || config.goalId !== null) goal = r.data;
      render();
    }).catch(function () {});
  }

  W.live(render, onEvent, reload);
})();
