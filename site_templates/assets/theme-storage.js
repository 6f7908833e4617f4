/* What mkdocs-material's bundle expects before it runs: __md_scope (the site's root: the folder above this
 * file's assets/ folder), __md_hash (a number for a text), and __md_get / __md_set (a JSON value kept in
 * localStorage or another Storage, per site). Loaded from this one file, in <head> before the bundle, instead of
 * inline on every page. */
(function () {
  "use strict";

  var scope = new URL("..", document.currentScript.src);

  window.__md_scope = scope;
  window.__md_hash = function (text) {
    var hash = 0;
    for (var i = 0; i < text.length; i += 1) {
      hash = ((hash << 5) - hash + text.charCodeAt(i)) | 0;
    }
    return hash;
  };
  window.__md_get = function (key, storage, where) {
    storage = storage || localStorage;
    return JSON.parse(storage.getItem((where || scope).pathname + "." + key));
  };
  window.__md_set = function (key, value, storage, where) {
    storage = storage || localStorage;
    try {
      storage.setItem((where || scope).pathname + "." + key, JSON.stringify(value));
    } catch (e) {
      // a full or refused storage: the theme works without remembering
    }
  };
})();
