/* Registry search: loads api/v1/search-index.json and ranks exactly like builder/search.py.
 *
 * Rows are [name, description, category, tags, headings]. A query token scores the best of its whole-word or
 * prefix matches across fields; every token must match somewhere; +20 when the query spells the name; ties
 * by name. Works as a browser script (window.SkillSearch) and under node (module.exports) for the shared
 * test vectors in tests/search_vectors.json.
 */
(function (global) {
  "use strict";

  var WEIGHTS = [["name", 10, 6], ["tags", 5, 3], ["category", 4, 2], ["description", 2, 1], ["headings", 1, 1]];
  var EXACT_NAME_BONUS = 20;

  function tokens(text) {
    return String(text).toLowerCase().split(/[^a-z0-9]+/).filter(function (t) { return t.length > 0; });
  }

  function fieldTokens(row) {
    var tags = [];
    row[3].forEach(function (tag) { tags = tags.concat(tokens(tag)); });
    return { name: tokens(row[0]), tags: tags, category: tokens(row[2]), description: tokens(row[1]),
             headings: tokens(row[4]) };
  }

  function score(row, queryTokens, fields) {
    fields = fields || fieldTokens(row);
    var total = 0;
    for (var i = 0; i < queryTokens.length; i++) {
      var q = queryTokens[i];
      var best = 0;
      for (var j = 0; j < WEIGHTS.length; j++) {
        var words = fields[WEIGHTS[j][0]];
        if (words.indexOf(q) !== -1) {
          best = Math.max(best, WEIGHTS[j][1]);
        } else if (words.some(function (w) { return w.startsWith(q); })) {
          best = Math.max(best, WEIGHTS[j][2]);
        }
      }
      if (best === 0) return 0;
      total += best;
    }
    if (queryTokens.join("-") === row[0]) total += EXACT_NAME_BONUS;
    return total;
  }

  /* Each row's field tokens, computed once per loaded index rather than on every keystroke. */
  var prepared = typeof WeakMap === "function" ? new WeakMap() : null;

  function preparedRows(index) {
    var rows = prepared ? prepared.get(index) : null;
    if (!rows) {
      rows = index.skills.map(function (row) { return { row: row, fields: fieldTokens(row) }; });
      if (prepared) prepared.set(index, rows);
    }
    return rows;
  }

  /* Skills matching every query token (and the filters), best first, ties by name: builder.search.rank. */
  function rank(index, query, options) {
    options = options || {};
    var category = options.category || "";
    var tag = options.tag || "";
    var limit = options.limit === undefined ? 10 : options.limit;
    var queryTokens = tokens(query);
    var hits = [];
    preparedRows(index).forEach(function (entry) {
      var row = entry.row;
      if (category && row[2] !== category) return;
      if (tag && row[3].indexOf(tag) === -1) return;
      var points = queryTokens.length ? score(row, queryTokens, entry.fields) : 1;
      if (points) hits.push({ name: row[0], score: points, row: row });
    });
    hits.sort(function (a, b) {
      if (a.score !== b.score) return b.score - a.score;
      return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
    });
    return hits.slice(0, limit);
  }

  var api = { tokens: tokens, score: score, rank: rank, WEIGHTS: WEIGHTS, EXACT_NAME_BONUS: EXACT_NAME_BONUS };

  if (typeof module === "object" && module.exports) module.exports = api;
  global.SkillSearch = api;

  /* ------------------------------------------------------------------------------------------- the page */

  if (typeof document === "undefined") return;

  var loaded = {};

  function loadIndex(root) {
    if (!loaded[root]) {
      loaded[root] = fetch(root + "api/v1/search-index.json").then(function (response) {
        if (!response.ok) throw new Error("HTTP " + response.status);
        return response.json();
      });
    }
    return loaded[root];
  }

  function el(tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function mount(box) {
    var root = box.getAttribute("data-root") || "";
    var limit = parseInt(box.getAttribute("data-limit") || "10", 10);
    var withFilters = box.hasAttribute("data-filters");
    var input = box.querySelector(".sr-search__input");
    var categorySelect = box.querySelector(".sr-search__category");
    var tagSelect = box.querySelector(".sr-search__tag");
    var status = box.querySelector(".sr-search__status");
    var list = box.querySelector(".sr-search__results");
    var index = null;
    var active = -1;
    var params = new URLSearchParams(window.location.search);

    input.value = params.get("q") || "";

    function links() { return list.querySelectorAll("a"); }

    function setActive(i) {
      var items = list.children;
      if (!items.length) { active = -1; return; }
      active = (i + items.length) % items.length;
      for (var k = 0; k < items.length; k++) {
        items[k].classList.toggle("sr-active", k === active);
        items[k].setAttribute("aria-selected", k === active ? "true" : "false");
      }
      items[active].scrollIntoView({ block: "nearest" });
    }

    function update() {
      if (!index) return;
      var query = input.value;
      var category = categorySelect ? categorySelect.value : "";
      var tag = tagSelect ? tagSelect.value : "";
      list.textContent = "";
      active = -1;
      if (!withFilters && !tokens(query).length) {
        status.textContent = "";
        input.setAttribute("aria-expanded", "false");
        return;
      }
      var all = rank(index, query, { category: category, tag: tag, limit: Infinity });
      all.slice(0, limit).forEach(function (hit) {
        var row = hit.row;
        var item = el("li", "sr-result");
        item.setAttribute("role", "option");
        var link = el("a", "sr-result__link");
        link.href = root + "skills/" + encodeURIComponent(row[0]) + "/";
        link.appendChild(el("span", "sr-result__name", row[0]));
        if (row[2]) link.appendChild(el("span", "sr-badge sr-badge--category", row[2]));
        link.appendChild(el("span", "sr-result__desc", row[1]));
        item.appendChild(link);
        list.appendChild(item);
      });
      var shown = Math.min(all.length, limit);
      status.textContent = all.length === 0 ? "No skill matches." :
        all.length === 1 ? "1 skill matches." :
        all.length + " skills match" + (shown < all.length ? ", showing the best " + shown + "." : ".");
      input.setAttribute("aria-expanded", all.length ? "true" : "false");
      if (all.length) setActive(0);
      if (withFilters && window.history.replaceState) {
        var next = new URLSearchParams();
        if (query) next.set("q", query);
        if (category) next.set("category", category);
        if (tag) next.set("tag", tag);
        var search = next.toString();
        window.history.replaceState(null, "", window.location.pathname + (search ? "?" + search : ""));
      }
    }

    input.addEventListener("input", update);
    input.addEventListener("keydown", function (event) {
      if (event.key === "ArrowDown") { event.preventDefault(); setActive(active + 1); }
      else if (event.key === "ArrowUp") { event.preventDefault(); setActive(active - 1); }
      else if (event.key === "Enter") {
        var items = links();
        if (items.length) { event.preventDefault(); window.location.href = items[Math.max(active, 0)].href; }
      } else if (event.key === "Escape") { input.value = ""; update(); }
    });
    if (categorySelect) categorySelect.addEventListener("change", update);
    if (tagSelect) tagSelect.addEventListener("change", update);

    status.textContent = "Loading the index…";
    loadIndex(root).then(function (data) {
      preparedRows(data);  // tokenise once now, so the first keystroke is as quick as the rest
      index = data;
      if (categorySelect) categorySelect.value = params.get("category") || "";
      if (tagSelect) {
        var seen = {};
        data.skills.forEach(function (row) { row[3].forEach(function (t) { seen[t] = (seen[t] || 0) + 1; }); });
        Object.keys(seen).sort().forEach(function (t) {
          var option = el("option", "", t + " (" + seen[t] + ")");
          option.value = t;
          tagSelect.appendChild(option);
        });
        tagSelect.value = params.get("tag") || "";
      }
      status.textContent = "";
      update();
    }, function (error) {
      status.textContent = "The search index could not be loaded (" + error.message + ").";
    });
  }

  function start() {
    Array.prototype.forEach.call(document.querySelectorAll(".sr-search"), mount);
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})(typeof globalThis !== "undefined" ? globalThis : this);
