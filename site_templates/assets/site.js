/* Every page's script (the pages read whole without it):
 * - Escape closes the phone menu (the theme's drawer checkbox under the header's menu button, site.css), as any
 *   menu closes, and gives the focus back to the button so the keyboard continues from where the menu opened.
 * - Install commands name the registry where the page is served from: a build with no base_url, `skillreg serve`
 *   reached by another name, or a copy served elsewhere shows commands that work from here. The page says which
 *   address the build wrote (data-registry) and where the site's root is from the page (data-root).
 * - Dates (a <time> the build took from git) get how long ago they were, by this browser's clock.
 */
(function () {
  "use strict";

  document.addEventListener("keydown", function (event) {
    var drawer = document.getElementById("__drawer");
    if (event.key !== "Escape" || !drawer || !drawer.checked) return;
    drawer.checked = false;
    drawer.dispatchEvent(new Event("change", { bubbles: true }));
    drawer.focus();
  });

  if (!/^https?:$/.test(location.protocol)) return;

  var boxes = document.querySelectorAll("[data-registry][data-root]");
  for (var i = 0; i < boxes.length; i += 1) {
    var built = boxes[i].getAttribute("data-registry");
    var here = new URL(boxes[i].getAttribute("data-root"), location.href).href;
    if (built === here) continue;
    var urls = boxes[i].querySelectorAll(".sr-url");
    for (var j = 0; j < urls.length; j += 1) {
      var text = urls[j].textContent;
      if (text.indexOf(built) === 0) urls[j].textContent = here + text.slice(built.length);
    }
  }

  if (typeof Intl === "undefined" || !Intl.RelativeTimeFormat) return;
  var words = new Intl.RelativeTimeFormat("en", { numeric: "auto" });
  var steps = [["year", 365], ["month", 30], ["week", 7], ["day", 1]];
  var times = document.querySelectorAll("time.sr-time[datetime]");
  for (var k = 0; k < times.length; k += 1) {
    var days = (Date.parse(times[k].getAttribute("datetime")) - Date.now()) / 864e5;
    if (isNaN(days)) continue;
    var step = steps.find(function (s) { return Math.abs(days) >= s[1]; }) || ["day", 1];
    var ago = document.createElement("span");
    ago.className = "sr-ago";
    ago.textContent = " (" + words.format(Math.round(days / step[1]), step[0]) + ")";
    times[k].after(ago);
  }
})();
