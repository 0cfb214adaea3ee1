/* STS slider: the number field holds the answer and starts empty, so an untouched slider is no answer, and
   "not set" shows beside it until the slider is moved (its thumb starts in the middle, which is not a value).
   Moving the slider fills the number; typing a number moves the slider; number keys jump to a value. */
(function () {
  "use strict";

  function parts(box) {
    return { slider: box.querySelector("[data-slider]"), number: box.querySelector('input[type="number"]') };
  }

  function show(box, value, from) {
    var p = parts(box);
    if (from !== p.number) p.number.value = value;
    if (from !== p.slider && value !== "") p.slider.value = value;
    p.slider.classList.toggle("untouched", p.number.value === "");
    var unset = box.querySelector("[data-unset]");
    if (unset) unset.hidden = p.number.value !== "";
  }

  document.addEventListener("input", function (e) {
    var box = e.target.closest && e.target.closest("[data-sts]");
    if (box) show(box, e.target.value, e.target);
  });

  document.addEventListener("pointerup", function (e) { // a click on the thumb where it stands is a choice too
    var box = e.target.matches && e.target.matches("[data-slider]") && e.target.closest("[data-sts]");
    if (box && parts(box).number.value === "") {
      show(box, e.target.value, e.target);
      parts(box).number.dispatchEvent(new Event("input", { bubbles: true }));
    }
  });

  document.addEventListener("invalid", function (e) { // Enter on an untouched slider: keep the slider focused
    var box = e.target.matches && e.target.matches('input[type="number"]') && e.target.closest("[data-sts]");
    if (box) setTimeout(function () { parts(box).slider.focus(); }, 0);
  }, true);

  document.addEventListener("keydown", function (e) {
    if (e.ctrlKey || e.metaKey || e.altKey || !/^[0-9]$/.test(e.key)) return;
    var box = document.querySelector("[data-sts]");
    var t = e.target;
    if (!box || (t !== document.body && !t.matches("[data-slider]"))) return;
    var p = parts(box), value = Number(e.key);
    if (value < Number(p.slider.min) || value > Number(p.slider.max)) return;
    e.preventDefault();
    show(box, String(value), null);
    p.number.dispatchEvent(new Event("input", { bubbles: true }));
    p.slider.focus();
  });
})();
