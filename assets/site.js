// Small browser-side behaviours that must not wait for the server:
// the mobile menu drawer, the "Go Back" button and the footer's current year.
(function () {
  "use strict";

  function closestFrom(event, selector) {
    return event.target instanceof Element ? event.target.closest(selector) : null;
  }

  document.addEventListener("click", function (event) {
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
})();
