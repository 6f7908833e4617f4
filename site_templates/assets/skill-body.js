/* A skill page built with publish.page_body: fetched holds a note where its SKILL.md goes, and the address of
 * the rendered body beside it (skills/<name>/skill-md.html.gz). This script fetches it, unpacks it and puts it
 * in place of the note, and the sections an inline page has below it (files, frontmatter, provenance, versions,
 * permissions, standard) after it. The body is the HTML the build rendered and sanitised, byte for byte what an
 * inline page holds, and the sections are the build's own template, so both are trusted as the page itself is;
 * nothing else is ever inserted.
 *
 * The file is gzip-compressed. A static host that serves it with "Content-Encoding: gzip" has the browser unpack
 * it already, so the script unpacks only what still starts with gzip's magic bytes. On failure the note stays
 * (its links lead to the skill's zip) and says what went wrong.
 */
(function () {
  "use strict";

  var GZIP_MAGIC = [0x1f, 0x8b];
  var SECTIONS_MARK = "\n<!--sr-sections-->\n";  // builder/site/skill_pages.py

  function unpacked(bytes) {
    if (bytes.length < 2 || bytes[0] !== GZIP_MAGIC[0] || bytes[1] !== GZIP_MAGIC[1]) {
      return Promise.resolve(bytes);
    }
    if (typeof DecompressionStream === "undefined") {
      return Promise.reject(new Error("this browser cannot unpack gzip (no DecompressionStream)"));
    }
    var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    return new Response(stream).arrayBuffer().then(function (buffer) { return new Uint8Array(buffer); });
  }

  function show(box, html) {
    var id = location.hash ? decodeURIComponent(location.hash.slice(1)) : "";
    var before = id ? document.getElementById(id) : null;
    // The sections below the body follow it in the same file, after the build's mark (its last occurrence: the
    // sections escape every "<" of their text, so the mark cannot come from them).
    var cut = html.lastIndexOf(SECTIONS_MARK);
    box.innerHTML = cut < 0 ? html : html.slice(0, cut);
    if (cut >= 0) {
      box.insertAdjacentHTML("afterend", html.slice(cut + SECTIONS_MARK.length));
    }
    box.removeAttribute("data-src");
    // An address such as .../#skill-usage or .../#files names a heading that was not there when the page loaded.
    var target = id ? document.getElementById(id) : null;
    if (target && target !== before) {
      target.scrollIntoView();
    }
  }

  function fail(box, src, why) {
    var note = box.querySelector(".sr-body__note");
    if (note) {
      note.appendChild(document.createTextNode(" (" + src + " could not be loaded: " + why + ".)"));
    }
    box.setAttribute("data-error", why);
  }

  function load(box) {
    var src = box.getAttribute("data-src");
    fetch(src)
      .then(function (response) {
        if (!response.ok) {
          throw new Error("HTTP " + response.status);
        }
        return response.arrayBuffer();
      })
      .then(function (buffer) { return unpacked(new Uint8Array(buffer)); })
      .then(function (bytes) { show(box, new TextDecoder("utf-8", { fatal: true }).decode(bytes)); })
      .catch(function (error) { fail(box, src, error && error.message ? error.message : String(error)); });
  }

  var boxes = document.querySelectorAll(".sr-body[data-src]");
  for (var i = 0; i < boxes.length; i += 1) {
    load(boxes[i]);
  }
})();
