/* A searchable picker for long <select multiple data-picker> lists (annotators): a search box above the list
   hides the options that do not contain what is typed; Enter adds the first one still shown to the selection
   and clears the box, without submitting the form. A line under the box names who is chosen. Without this
   script the plain multi-select still works. No inline code: loaded from static/ (CSP). */
(function () {
  "use strict";

  function visible(select) {
    return Array.prototype.filter.call(select.options, function (o) { return !o.hidden; });
  }

  function describe(select, line) {
    var chosen = Array.prototype.filter.call(select.options, function (o) { return o.selected; })
      .map(function (o) { return o.dataset.pickerName || o.text; });
    line.textContent = chosen.length ? "Chosen: " + chosen.join(", ") : "Nobody chosen yet.";
  }

  function attach(select) {
    var box = document.createElement("input"), line = document.createElement("p");
    box.type = "search";
    box.className = "picker-search";
    box.placeholder = "Type part of a name or language, Enter to add";
    box.setAttribute("aria-label", "Search " + (select.getAttribute("aria-label") || select.name));
    box.setAttribute("aria-controls", select.id);
    line.className = "picker-chosen muted";
    line.setAttribute("aria-live", "polite");
    Array.prototype.forEach.call(select.options, function (o) { o.dataset.pickerName = o.text.split(" [")[0]; });
    select.parentNode.insertBefore(box, select);
    select.parentNode.insertBefore(line, select.nextSibling);
    box.addEventListener("input", function () {
      var needle = box.value.trim().toLowerCase();
      Array.prototype.forEach.call(select.options, function (o) {
        o.hidden = needle !== "" && o.text.toLowerCase().indexOf(needle) < 0;
      });
    });
    box.addEventListener("keydown", function (event) {
      if (event.key !== "Enter") return;
      event.preventDefault();
      var first = visible(select)[0];
      if (first && box.value.trim() !== "") first.selected = true;
      box.value = "";
      box.dispatchEvent(new Event("input"));
      describe(select, line);
    });
    select.addEventListener("change", function () { describe(select, line); });
    describe(select, line);
  }

  function init() { document.querySelectorAll("select[multiple][data-picker]").forEach(attach); }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
