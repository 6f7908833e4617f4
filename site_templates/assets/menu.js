/* The phone menu is the theme's drawer checkbox under the header's menu button (site.css): Escape closes it, as
 * any menu closes, and gives the focus back to the button so the keyboard continues from where the menu opened. */
(function () {
  "use strict";

  document.addEventListener("keydown", function (event) {
    var drawer = document.getElementById("__drawer");
    if (event.key !== "Escape" || !drawer || !drawer.checked) return;
    drawer.checked = false;
    drawer.dispatchEvent(new Event("change", { bubbles: true }));
    drawer.focus();
  });
})();
