// Small browser-side behaviours that must not wait for the server: the mobile menu
// drawer, the "Go Back" button, the footer's current year and the home page's book
// search (/?q=...) and a form's way past an app that is not connected. Pages without a form run nothing else (publisher/web/page_kinds.py);
// on a page with a form this starts the app (hydration) once the page has painted.
(function () {
  "use strict";

  function closestFrom(event, selector) {
    return event.target instanceof Element ? event.target.closest(selector) : null;
  }

  var sent = {};
  document.addEventListener("click", function (event) {
    // A buy press: one count per book per page (server/buy_beacon.py).
    var buy = closestFrom(event, "a[data-buy]"), slug = buy && buy.dataset.buy;
    if (slug && !sent[slug] && navigator.sendBeacon) sent[slug] = navigator.sendBeacon("/count/buy", slug + " " + buy.hostname);
    var opener = closestFrom(event, "[data-drawer-open]");
    if (opener) {
      var drawer = document.getElementById(opener.getAttribute("data-drawer-open"));
      if (drawer && !drawer.open) drawer.showModal();
      return;
    }
    var closer = closestFrom(event, "[data-drawer-close]");
    if (closer) {
      closer.closest("dialog").close();
      return;
    }
    var openDrawer = closestFrom(event, "dialog[data-drawer][open]");
    if (openDrawer && (event.target === openDrawer || closestFrom(event, "a[href]"))) {
      // A click on the backdrop, or on a menu item (which then navigates).
      openDrawer.close();
      return;
    }
    if (closestFrom(event, "[data-history-back]")) {
      if (window.history.length > 1) window.history.back();
      else window.location.assign("/");
    }
  });

  function showCurrentYear() {
    var year = String(new Date().getFullYear());
    document.querySelectorAll("[data-current-year]").forEach(function (el) {
      if (el.textContent !== year) el.textContent = year;
    });
  }
  showCurrentYear();
  window.addEventListener("load", showCurrentYear);

  // The book search (publisher/web/components/book_cards.py): cards carry their searchable
  // text, the status region its wording. A static page (the build marks its <html>)
  // is searched at once. Where the app renders the page (a page that starts it, or
  // any page on the development server) the search waits until the app has
  // rendered, so React never finds a document it did not render, and runs again if
  // the app renders the list afresh.
  function applyBookSearch() {
    var status = document.querySelector("[data-book-search-status]:not([data-searched])");
    if (!status) return;
    status.setAttribute("data-searched", "");
    var param = status.getAttribute("data-book-search-status");
    var query = (new URLSearchParams(window.location.search).get(param) || "").trim();
    if (!query) return;
    var terms = query.toLowerCase().split(/\s+/);
    var cards = document.querySelectorAll("[data-book-search-text]");
    var shown = 0;
    cards.forEach(function (card) {
      var text = card.getAttribute("data-book-search-text");
      var matches = terms.every(function (term) { return text.indexOf(term) !== -1; });
      card.hidden = !matches;
      if (matches) shown += 1;
    });
    var values = { query: query, count: String(shown), total: String(cards.length) };
    var template = status.getAttribute(shown ? "data-match" : "data-no-match");
    status.querySelector("[data-book-search-message]").textContent = template.replace(
      /\{(query|count|total)\}/g,
      function (_, name) { return values[name]; }
    );
    status.querySelector("[data-book-search-result]").hidden = false;
  }
  function searchWhatTheAppRenders() {
    applyBookSearch();
    new MutationObserver(applyBookSearch).observe(document.body, { childList: true, subtree: true });
  }
  var root = document.documentElement;
  if (root.hasAttribute("data-static-page")) applyBookSearch();
  else if (root.hasAttribute("data-app-rendered")) searchWhatTheAppRenders();
  else document.addEventListener("publisher:app-rendered", searchWhatTheAppRenders, { once: true });

  // A form works two ways (publisher/web/components/forms.py, and the list link pages' button:
  // publisher/web/components/list_link.py): the app sends it while it is
  // connected (data-connected="true"); otherwise (not started yet, no JavaScript for the app,
  // its event channel never opened or dropped) the browser posts it to its own page, which
  // the server answers alone. Stopped here, the press never reaches the app, which would
  // otherwise hold it until a connection that may never come.
  window.addEventListener(
    "submit",
    function (event) {
      var form = event.target;
      if (!(form instanceof HTMLFormElement) || !form.hasAttribute("data-app-form")) return;
      if (form.getAttribute("data-connected") === "true") return;
      // The development server renders its pages in the browser and has no server answer:
      // there the app holds the press until it connects (a built page has the boot script).
      if (!document.querySelector("script[data-app-boot]")) return;
      event.stopImmediatePropagation();
    },
    true
  );

  // The build (publisher/build/plugins.py) makes React Router's boot module and its
  // preloads inert; start them here, after the load event and the next paint.
  function startApp() {
    var boot = document.querySelector('script[data-app-boot]');
    if (!boot || boot.hasAttribute("data-started")) return;
    boot.setAttribute("data-started", "");
    document.querySelectorAll('link[rel="x-app-modulepreload"]').forEach(function (link) {
      var preload = document.createElement("link");
      preload.rel = "modulepreload";
      preload.href = link.getAttribute("href");
      document.head.appendChild(preload);
    });
    var script = document.createElement("script");
    script.type = "module";
    script.textContent = boot.textContent;
    document.body.appendChild(script);
  }
  function startAfterPaint() {
    window.requestAnimationFrame(function () {
      window.setTimeout(startApp, 0);
    });
  }
  if (document.readyState === "complete") startAfterPaint();
  else window.addEventListener("load", startAfterPaint, { once: true });

  // The dashboard's passkey buttons (assets/admin.js), on the admin pages only: no public
  // page carries or runs them.
  if (/^\/admin(\/|$)/.test(window.location.pathname)) {
    var admin = document.createElement("script");
    admin.src = "/admin.js";
    document.head.appendChild(admin);
  }
})();
