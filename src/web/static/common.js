// Shared by the dashboard and the OBS widget pages, loaded before their own scripts (a file, not
// inline code: CSP `script-src 'self'`).
'use strict';
(function () {
  /** Element with text only: strings from the server or a publication never become markup. */
  function el(tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  /** Our real-time endpoint on this page's host, over TLS when the page is. */
  function websocketUrl() {
    return (location.protocol === 'https:' ? 'wss://' : 'ws://') + location.host + '/connection/websocket';
  }

  window.OpenAlertsCommon = { el: el, websocketUrl: websocketUrl };
})();
