/* Nothing on screen is lost: the answer being given is kept in localStorage (per user, batch and item)
   until the server has stored it. A reload brings the draft back, unless the item already has a stored
   answer, which always wins. Failed submits say so and leave the answer on the page. */
(function () {
  "use strict";
  var PREFIX = "hume:draft:", MAX_AGE_MS = 14 * 24 * 3600 * 1000, IGNORE = { csrfmiddlewaretoken: 1, shown: 1 };

  function store() { try { return window.localStorage; } catch (e) { return null; } }
  function keyOf(form) { return PREFIX + form.dataset.draftKey; }

  function save(form) {
    var s = store(), fields = [];
    if (!s) return;
    new FormData(form).forEach(function (v, k) { if (!IGNORE[k] && typeof v === "string") fields.push([k, v]); });
    try { s.setItem(keyOf(form), JSON.stringify({ saved: Date.now(), fields: fields })); } catch (e) { /* full */ }
  }

  function apply(form, name, values) {
    form.querySelectorAll('[name="' + CSS.escape(name) + '"]').forEach(function (el) {
      if (el.type === "radio" || el.type === "checkbox") el.checked = values.indexOf(el.value) >= 0;
      else el.value = values[0];
      el.dispatchEvent(new Event("input", { bubbles: true }));
      el.dispatchEvent(new Event("change", { bubbles: true }));
    });
  }

  function restore(form) {
    var s = store(), raw = s && s.getItem(keyOf(form)), draft, byName = {};
    if (!raw) return;
    if (form.hasAttribute("data-answered")) { s.removeItem(keyOf(form)); return; }
    try { draft = JSON.parse(raw); } catch (e) { s.removeItem(keyOf(form)); return; }
    draft.fields.forEach(function (f) { (byName[f[0]] = byName[f[0]] || []).push(f[1]); });
    Object.keys(byName).forEach(function (name) { apply(form, name, byName[name]); });
    var status = form.querySelector(".form-status");
    if (status) status.textContent = "Your unsent answer was restored.";
  }

  function forgetOld() {
    var s = store(), now = Date.now();
    if (!s) return;
    for (var i = s.length - 1; i >= 0; i -= 1) {
      var k = s.key(i);
      if (k && k.indexOf(PREFIX) === 0) {
        try { if (now - JSON.parse(s.getItem(k)).saved > MAX_AGE_MS) s.removeItem(k); } catch (e) { s.removeItem(k); }
      }
    }
  }

  function init(root) {
    var form = root.querySelector ? root.querySelector("form[data-draft-key]") : null;
    if (root.matches && root.matches("form[data-draft-key]")) form = root;
    if (form && !form.dataset.draftReady) { form.dataset.draftReady = "1"; restore(form); }
  }

  function netStatus(text) {
    var box = document.getElementById("net-status");
    if (!box) return;
    box.textContent = text || "";
    box.hidden = !text;
  }

  function onEdit(e) {
    var form = e.target.closest && e.target.closest("form[data-draft-key]");
    if (form && form.dataset.draftReady) save(form);
  }

  document.addEventListener("DOMContentLoaded", function () { forgetOld(); init(document); });
  document.addEventListener("htmx:load", function (e) { init(e.detail.elt); });
  document.addEventListener("input", onEdit);
  document.addEventListener("change", onEdit);

  // The form is usually gone (swapped out) when the response arrives, so the request carries its key.
  document.addEventListener("htmx:beforeRequest", function (e) {
    var form = e.detail.elt.closest && e.detail.elt.closest("form[data-draft-key]");
    if (!form) return;
    save(form);
    if (e.detail.requestConfig.verb === "post") e.detail.xhr.humeDraftKey = keyOf(form); // not "back"
  });

  document.addEventListener("htmx:afterRequest", function (e) {
    var xhr = e.detail.xhr, status = xhr.status, s = store();
    if (status >= 200 && status < 300) {
      if (xhr.humeDraftKey && s) s.removeItem(xhr.humeDraftKey);
      netStatus("");
    } else if (status === 0) {
      netStatus("Not saved: the server could not be reached. Your answer is still here; press Enter to try again.");
    } else if (status >= 400 && status !== 409 && status !== 422) {
      netStatus("Not saved: the server answered " + status + ". Your answer is still here; press Enter to try again.");
    }
  });
})();
