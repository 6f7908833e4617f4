/* Registry search: reads the sharded index under api/v1/search/ and ranks exactly like builder/core/search.py.
 *
 * A query token scores the best of its whole-word or prefix matches across fields (name, tags, category,
 * description, headings); every token must match somewhere; +20 when the query spells the name; ties by name.
 * A token of 4 to 32 characters that no indexed token equals or starts with matches instead, for fewer points,
 * the tokens of its term file (same first three characters) one edit away (two from 8 characters on).
 * The index is fetched a file at a time: the manifest (index.json), then per query token its precomputed points
 * (prefix/, tokens of one or two characters) or the postings of the tokens sharing its first three characters
 * (terms/), then the rows of the hits shown (rows/) and, with a filter, the rows of that category or tag
 * (facets/). Every file but the manifest is named by its content's digest, so the browser may keep it forever.
 * A collection filter reads the collection's own document (api/v1/collections/<name>.json) and the rows files
 * holding its skills, which a collection of a few skills keeps to a few files.
 * Works as a browser script (window.SkillSearch) and under node (module.exports) for the shared test vectors
 * in tests/search_vectors.json.
 */
(function (global) {
  "use strict";

  var WEIGHTS = [["name", 10, 6], ["tags", 5, 3], ["category", 4, 2], ["description", 2, 1], ["headings", 1, 1]];
  var EXACT_NAME_BONUS = 20;
  var ROOT = "api/v1/search/";
  var TERM_KEY = 3;
  var TYPO_SHORTEST = 4, TYPO_LONGEST = 32;

  /* How many edits may turn the query token ``q`` into an indexed token: builder.core.search.typo_budget. */
  function typoBudget(q) {
    if (q.length < TYPO_SHORTEST || q.length > TYPO_LONGEST) return 0;
    return q.length <= 7 ? 1 : 2;
  }

  /* The optimal string alignment distance of ``a`` and ``b``, or budget + 1 once it is more: builder.core.search.edits. */
  function edits(a, b, budget) {
    if (Math.abs(a.length - b.length) > budget) return budget + 1;
    var before = [], previous = [], i, j;
    for (j = 0; j <= b.length; j++) previous.push(j);
    for (i = 1; i <= a.length; i++) {
      var current = [i], least = i;
      for (j = 1; j <= b.length; j++) {
        var best = Math.min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
        if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, before[j - 2] + 1);
        current.push(best);
        if (best < least) least = best;
      }
      if (least > budget) return budget + 1;
      before = previous;
      previous = current;
    }
    return Math.min(previous[b.length], budget + 1);
  }

  /* Points for a token matched ``distance`` edits away in field number ``field``: builder.core.search.typo_points. */
  function typoPoints(field, distance) {
    return Math.max(1, Math.floor(WEIGHTS[field][2] / distance));
  }

  function tokens(text) {
    return String(text).toLowerCase().split(/[^a-z0-9]+/).filter(function (t) { return t.length > 0; });
  }

  /* ``object[key]`` if ``object`` holds it itself: a parsed JSON object inherits Object.prototype's keys
   * ("constructor", "toString", ...), and a query token or a name must never reach them. */
  function own(object, key) {
    return Object.prototype.hasOwnProperty.call(object, key) ? object[key] : undefined;
  }

  /* ``cache.get(key)``, made by ``make()`` the first time: the caches are Maps because their keys (paths, query
   * tokens, facet values) come from the index and the user, and an object would answer "constructor". */
  function remembered(cache, key, make) {
    if (!cache.has(key)) cache.set(key, make());
    return cache.get(key);
  }

  function rowsOf(gaps) {
    var out = new Array(gaps.length), row = 0;
    for (var i = 0; i < gaps.length; i++) { row += gaps[i]; out[i] = row; }
    return out;
  }

  /* Row -> the most points any level gives it; levels are [points, rows]. */
  function bestOf(levels) {
    var best = new Map();
    levels.slice().sort(function (a, b) { return a[0] - b[0]; }).forEach(function (level) {
      var rows = level[1];
      for (var i = 0; i < rows.length; i++) best.set(rows[i], level[0]);
    });
    return best;
  }

  /* The sharded index behind ``fetchJson(path) -> Promise of the parsed file``: builder.client.search.ShardedSearch. */
  function Index(manifest, fetchJson) {
    this.manifest = manifest;
    this.count = manifest.count;
    this.perFile = manifest.rows_per_file;
    this.firstNames = manifest.rows.map(function (chunk) { return chunk[0]; });
    this.fetchJson = fetchJson;
    this.files = new Map();
    this.scores = new Map();
    this.facetRows = new Map();
  }

  Index.prototype.file = function (path) {
    var fetchJson = this.fetchJson;
    return remembered(this.files, path, function () { return fetchJson(path); });
  };

  Index.prototype.tokenScores = function (q) {
    var self = this;
    return remembered(self.scores, q, function () { return self.computeScores(q); });
  };

  Index.prototype.computeScores = function (q) {
    var self = this, prefixes = self.manifest.prefixes;
    if (q.length < TERM_KEY) {
      if (own(prefixes, q) === undefined) return Promise.resolve(new Map());
      return self.file(ROOT + "prefix/" + q + "." + own(prefixes, q) + ".json").then(function (doc) {
        return bestOf(doc.scores.map(function (level) { return [level[0], rowsOf(level[1])]; }));
      });
    }
    var parent = q.slice(0, 2), key = q.slice(0, TERM_KEY);
    if (own(prefixes, parent) === undefined) return Promise.resolve(new Map());
    return self.file(ROOT + "prefix/" + parent + "." + own(prefixes, parent) + ".json").then(function (doc) {
      if (own(doc.terms, key) === undefined) return new Map();
      return self.file(ROOT + "terms/" + key + "." + own(doc.terms, key) + ".json").then(function (shard) {
        var levels = [], budget = typoBudget(q), terms = Object.keys(shard.terms);
        terms.forEach(function (token) {
          if (token.slice(0, q.length) !== q) return;
          own(shard.terms, token).forEach(function (gaps, field) {
            if (field < WEIGHTS.length) levels.push([WEIGHTS[field][token === q ? 1 : 2], rowsOf(gaps)]);
          });
        });
        if (!levels.length && budget) {
          terms.forEach(function (token) {
            var distance = edits(q, token, budget);
            if (distance > budget) return;
            own(shard.terms, token).forEach(function (gaps, field) {
              if (field < WEIGHTS.length) levels.push([typoPoints(field, distance), rowsOf(gaps)]);
            });
          });
        }
        return bestOf(levels);
      });
    });
  };

  Index.prototype.facets = function () {
    return this.file(ROOT + "facets/" + this.manifest.facets + ".json");
  };

  Index.prototype.facetSet = function (kind, value) {
    var self = this;
    return remembered(self.facetRows, kind + "\u0000" + value, function () {
      return self.facets().then(function (facets) {
        var entry = own(own(facets, kind) || {}, value);
        if (!entry) return new Set();
        return self.file(ROOT + "facets/" + entry[1] + ".json").then(function (doc) { return new Set(rowsOf(doc.rows)); });
      });
    });
  };

  /* The rows of the skills the collection ``name`` lists (its API document names them by slug). */
  Index.prototype.collectionSet = function (name) {
    var self = this;
    return remembered(self.facetRows, "collection\u0000" + name, function () {
      return self.file("api/v1/collections/" + encodeURIComponent(name) + ".json").then(function (doc) {
        return Promise.all(doc.skills.map(function (skill) { return self.rowNamed(skill); }));
      }).then(function (rows) { return new Set(rows.filter(function (row) { return row !== null; })); });
    });
  };

  Index.prototype.chunk = function (number) {
    return this.file(ROOT + "rows/" + this.manifest.rows[number][1] + ".json").then(function (doc) { return doc.rows; });
  };

  Index.prototype.row = function (number) {
    var self = this;
    return self.chunk(Math.floor(number / self.perFile)).then(function (rows) { return rows[number % self.perFile]; });
  };

  /* The row number of the skill called ``name`` (names in the manifest are the first of each rows file). */
  Index.prototype.rowNamed = function (name) {
    var self = this, lo = 0, hi = self.firstNames.length;
    while (lo < hi) {
      var mid = (lo + hi) >> 1;
      if (self.firstNames[mid] <= name) lo = mid + 1; else hi = mid;
    }
    if (lo === 0) return Promise.resolve(null);
    var number = lo - 1;
    return self.chunk(number).then(function (rows) {
      for (var i = 0; i < rows.length; i++) if (rows[i][0] === name) return number * self.perFile + i;
      return null;
    });
  };

  /* Every matching [points, row], in no order. */
  Index.prototype.matches = function (query, options) {
    var self = this, queryTokens = tokens(query);
    var category = options.category || "", tag = options.tag || "", collection = options.collection || "";
    var found;
    if (queryTokens.length) {
      found = Promise.all(queryTokens.map(function (q) { return self.tokenScores(q); })).then(function (maps) {
        var totals = new Map(maps[0]);
        for (var i = 1; i < maps.length && totals.size; i++) {
          var next = new Map();
          totals.forEach(function (points, row) { if (maps[i].has(row)) next.set(row, points + maps[i].get(row)); });
          totals = next;
        }
        var wholeName = WEIGHTS[0][1] * queryTokens.length, mayBeExact = false;
        totals.forEach(function (points) { if (points === wholeName) mayBeExact = true; });
        if (!mayBeExact) return totals;
        return self.rowNamed(queryTokens.join("-")).then(function (exact) {
          if (exact !== null && totals.has(exact)) totals.set(exact, totals.get(exact) + EXACT_NAME_BONUS);
          return totals;
        });
      });
    } else {
      var all = new Map();
      for (var r = 0; r < self.count; r++) all.set(r, 1);
      found = Promise.resolve(all);
    }
    return Promise.all([found, category ? self.facetSet("category", category) : null,
                        tag ? self.facetSet("tag", tag) : null,
                        collection ? self.collectionSet(collection) : null]).then(function (parts) {
      var out = [];
      parts[0].forEach(function (points, row) {
        if ((!parts[1] || parts[1].has(row)) && (!parts[2] || parts[2].has(row)) && (!parts[3] || parts[3].has(row))) {
          out.push([points, row]);
        }
      });
      return out;
    });
  };

  /* {count, hits: [{name, score, row}]}: the skills matching every query token (and the filters), best first,
   * ties by name, at most ``limit`` (default 10) of them: builder.core.search.rank. */
  Index.prototype.rank = function (query, options) {
    var self = this;
    options = options || {};
    var limit = options.limit === undefined ? 10 : options.limit;
    return self.matches(query, options).then(function (found) {
      found.sort(function (a, b) { return a[0] !== b[0] ? b[0] - a[0] : a[1] - b[1]; });
      var best = found.slice(0, limit);
      return Promise.all(best.map(function (hit) { return self.row(hit[1]); })).then(function (rows) {
        return { count: found.length, hits: best.map(function (hit, i) {
          return { name: rows[i][0], score: hit[0], row: rows[i] };
        }) };
      });
    });
  };

  /* The index of a site: ``fetchJson`` is given paths relative to the site's root. */
  function open(fetchJson) {
    return fetchJson(ROOT + "index.json").then(function (manifest) {
      /* Version 3 adds the full sha256 of every file beside the digits in its name (sha256 maps this page does
       * not read: it fetches the files from its own site); the fields read here are version 2's. */
      if (manifest.version !== 2 && manifest.version !== 3) {
        throw new Error("unknown search index version " + manifest.version);
      }
      return new Index(manifest, fetchJson);
    });
  }

  var api = { tokens: tokens, edits: edits, typoBudget: typoBudget, open: open, Index: Index, WEIGHTS: WEIGHTS, EXACT_NAME_BONUS: EXACT_NAME_BONUS };

  if (typeof module === "object" && module.exports) module.exports = api;
  global.SkillSearch = api;

  /* ------------------------------------------------------------------------------------------- the page */

  if (typeof document === "undefined") return;

  var loaded = new Map();

  function loadIndex(root) {
    return remembered(loaded, root, function () {
      return open(function (path) {
        return fetch(root + path).then(function (response) {
          if (!response.ok) throw new Error("HTTP " + response.status + " for " + path);
          return response.json();
        });
      });
    });
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
    var collectionSelect = box.querySelector(".sr-search__collection");
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

    var asked = 0;  // the newest query: an answer to an older one arriving late is dropped

    function show(result, query, category, tag, collection) {
      list.textContent = "";
      active = -1;
      result.hits.forEach(function (hit) {
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
      var count = result.count, shown = result.hits.length;
      status.textContent = count === 0 ? "No skill matches." :
        count === 1 ? "1 skill matches." :
        count + " skills match" + (shown < count ? ", showing the best " + shown + "." : ".");
      input.setAttribute("aria-expanded", count ? "true" : "false");
      if (count) setActive(0);
      if (withFilters && window.history.replaceState) {
        var next = new URLSearchParams();
        if (query) next.set("q", query);
        if (category) next.set("category", category);
        if (tag) next.set("tag", tag);
        if (collection) next.set("collection", collection);
        var search = next.toString();
        window.history.replaceState(null, "", window.location.pathname + (search ? "?" + search : ""));
      }
    }

    function update() {
      if (!index) return;
      var query = input.value;
      var category = categorySelect ? categorySelect.value : "";
      var tag = tagSelect ? tagSelect.value : "";
      var collection = collectionSelect ? collectionSelect.value : "";
      var mine = ++asked;
      if (!withFilters && !tokens(query).length) {
        list.textContent = "";
        active = -1;
        status.textContent = "";
        input.setAttribute("aria-expanded", "false");
        return;
      }
      index.rank(query, { category: category, tag: tag, collection: collection, limit: limit }).then(function (result) {
        if (mine === asked) show(result, query, category, tag, collection);
      }, function (error) {
        if (mine === asked) status.textContent = "The search index could not be read (" + error.message + ").";
      });
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
    if (collectionSelect) collectionSelect.addEventListener("change", update);

    status.textContent = "Loading the index…";
    loadIndex(root).then(function (data) {
      index = data;
      if (categorySelect) categorySelect.value = params.get("category") || "";
      if (collectionSelect) collectionSelect.value = params.get("collection") || "";
      status.textContent = "";
      if (!tagSelect) return update();
      return data.facets().then(function (facets) {
        Object.keys(facets.tag).sort().forEach(function (t) {
          var option = el("option", "", t + " (" + own(facets.tag, t)[0] + ")");
          option.value = t;
          tagSelect.appendChild(option);
        });
        tagSelect.value = params.get("tag") || "";
        update();
      });
    }).catch(function (error) {
      status.textContent = "The search index could not be loaded (" + error.message + ").";
    });
  }

  function start() {
    Array.prototype.forEach.call(document.querySelectorAll(".sr-search"), mount);
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})(typeof globalThis !== "undefined" ? globalThis : this);
