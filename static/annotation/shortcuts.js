/* Loop-wide keys beside the answer keys of keys.js: p previous item, s skip, f flag, ? the list of every key.
   Ignored while typing in a field, like every answer key; delegated from document, so htmx swaps need nothing. */
(function () {
  "use strict";

  function typing(el) {
    if (!el || !el.tagName) return false;
    if (el.isContentEditable || el.tagName === "TEXTAREA" || el.tagName === "SELECT") return true;
    return el.tagName === "INPUT" && ["radio", "checkbox", "range", "button", "submit"].indexOf(el.type) < 0;
  }

  function openBox(field) { // open the skip or flag box and put the cursor in it; Enter there sends it
    var input = document.querySelector(field);
    var box = input && input.closest("details");
    if (!box) return false;
    box.open = true;
    input.focus();
    return true;
  }

  function toggleHelp() {
    var help = document.getElementById("keys-help");
    if (!help) return false;
    if (help.open) help.close(); else help.showModal();
    return true;
  }

  document.addEventListener("keydown", function (e) {
    if (e.ctrlKey || e.metaKey || e.altKey || e.defaultPrevented || typing(e.target)) return;
    var help = document.getElementById("keys-help");
    if (help && help.open && e.key !== "?") return; // the dialog has its own keys (Escape closes it)
    var done = false;
    if (e.key === "?") done = toggleHelp();
    else if (e.target.closest && e.target.closest(".side-box")) return;
    else if (e.key === "p") {
      var back = document.querySelector("#loop a.back");
      if (back) { back.click(); done = true; }
    } else if (e.key === "s") done = openBox("#loop [name=skip_reason]");
    else if (e.key === "f") done = openBox("#loop [name=flag_tags]");
    if (done) e.preventDefault();
  });

  document.addEventListener("click", function (e) {
    if (e.target.closest && e.target.closest("[data-close-help]")) document.getElementById("keys-help").close();
  });
})();
