/* Keyboard-first answering: number and letter keys pick options, Enter submits a complete form.
   Everything is delegated from document, so items swapped in by htmx need no set-up. */
(function () {
  "use strict";

  function typing(el) {
    if (!el || !el.tagName) return false;
    if (el.isContentEditable || el.tagName === "TEXTAREA" || el.tagName === "SELECT") return true;
    return el.tagName === "INPUT" && ["radio", "checkbox", "range", "button", "submit"].indexOf(el.type) < 0;
  }

  function pick(input, focus) {
    if (!input) return false;
    input.checked = true;
    input.dispatchEvent(new Event("change", { bubbles: true }));
    if (focus !== false) input.focus();
    return true;
  }

  function choiceKey(group, key) {
    return pick(group.querySelector('input[data-key="' + CSS.escape(key) + '"]'));
  }

  function rowsKey(group, key) {
    if (key === "0") { // everything not judged yet is not relevant
      group.querySelectorAll(".row").forEach(function (row) {
        if (!row.querySelector("input:checked")) pick(row.querySelector('input[value="0"]'), false);
      });
      return true;
    }
    var row = group.querySelector('.row[data-row="' + CSS.escape(key) + '"]');
    if (!row) return false;
    var yes = row.querySelector('input[value="1"]');
    return pick(yes.checked ? row.querySelector('input[value="0"]') : yes);
  }

  function currentAxis(group) {
    var active = document.activeElement && document.activeElement.closest && document.activeElement.closest(".axis");
    if (active && group.contains(active)) return active;
    var rows = Array.prototype.slice.call(group.querySelectorAll(".axis"));
    return group.querySelector(".axis.current") ||
      rows.filter(function (r) { return !r.querySelector("input:checked"); })[0] || rows[0];
  }

  function focusAxis(row) {
    if (!row) return;
    (row.querySelector("input:checked") || row.querySelector("input")).focus();
  }

  function axesKey(group, key) {
    var row = currentAxis(group);
    if (key === "ArrowDown" || key === "ArrowUp") {
      focusAxis(key === "ArrowDown" ? row.nextElementSibling : row.previousElementSibling);
      return true;
    }
    if (!pick(row.querySelector('input[value="' + CSS.escape(key) + '"]'), false)) return false;
    var next = row.nextElementSibling || row;
    markAxis(next);
    focusAxis(next);
    return true;
  }

  function submit(form) {
    if (form.checkValidity()) {
      form.requestSubmit();
    } else {
      form.reportValidity();
      var status = form.querySelector(".form-status");
      if (status) { status.textContent = "Not complete yet: every part needs an answer."; status.dataset.incomplete = "1"; }
    }
  }

  function onEnter(e, form) {
    var t = e.target;
    var side = t.closest && t.closest(".side-box");
    if (side) { // Enter in the skip or flag box sends that box, never the answer
      if (typing(t) || t.type === "checkbox") { e.preventDefault(); side.querySelector("[data-side-submit]").click(); }
      return;
    }
    if (["BUTTON", "A", "SUMMARY", "TEXTAREA"].indexOf(t.tagName) >= 0) return;
    if (typing(t) && !t.name) return; // helper fields such as a cluster's name
    if (t !== document.body && !form.contains(t)) return;
    e.preventDefault();
    submit(form);
  }

  document.addEventListener("keydown", function (e) {
    if (e.ctrlKey || e.metaKey || e.altKey || e.defaultPrevented) return;
    var form = document.getElementById("answer-form");
    if (!form) return;
    if (e.key === "Enter") return onEnter(e, form);
    var t = e.target;
    if (typing(t) || (t.closest && t.closest(".side-box"))) return;
    if (t !== document.body && !form.contains(t)) return;
    var group = form.querySelector("[data-keys]");
    if (!group) return;
    var kind = group.getAttribute("data-keys");
    var done = kind === "choice" ? choiceKey(group, e.key.toLowerCase())
      : kind === "rows" ? rowsKey(group, e.key)
      : kind === "axes" ? axesKey(group, e.key) : false;
    if (done) e.preventDefault();
  });

  function clearReminder(e) { // a complete form no longer needs the "not complete" reminder
    var form = e.target.closest && e.target.closest("#answer-form"), status = form && form.querySelector(".form-status");
    if (status && status.dataset.incomplete && form.checkValidity()) { status.textContent = ""; delete status.dataset.incomplete; }
  }
  document.addEventListener("change", clearReminder);
  document.addEventListener("input", clearReminder);

  function markAxis(row) { // highlight the axis that number keys will rate
    if (!row) return;
    row.parentNode.querySelectorAll(".axis.current").forEach(function (r) { r.classList.remove("current"); });
    row.classList.add("current");
  }
  document.addEventListener("focusin", function (e) { markAxis(e.target.closest && e.target.closest(".axis")); });
  function initAxes(root) {
    var group = root.querySelector && root.querySelector("[data-keys=axes]");
    if (group) markAxis(currentAxis(group));
  }
  document.addEventListener("DOMContentLoaded", function () { initAxes(document); });
  document.addEventListener("htmx:load", function (e) { initAxes(e.detail.elt); });
})();
